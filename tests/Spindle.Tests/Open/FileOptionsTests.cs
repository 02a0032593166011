using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>Every FileOptions flag, alone and combined, against File.OpenHandle.</summary>
public class FileOptionsTests
{
    public static TheoryData<FileOptions> EveryOption() =>
    [
        FileOptions.None, FileOptions.WriteThrough, FileOptions.Asynchronous, FileOptions.RandomAccess,
        FileOptions.DeleteOnClose, FileOptions.SequentialScan, FileOptions.Encrypted, (FileOptions)0x20000000,
        FileOptions.SequentialScan | FileOptions.RandomAccess,
        FileOptions.WriteThrough | FileOptions.Asynchronous | FileOptions.RandomAccess | FileOptions.DeleteOnClose
            | FileOptions.SequentialScan | FileOptions.Encrypted | (FileOptions)0x20000000,
        (FileOptions)1, (FileOptions)(-1), (FileOptions)0x02000000, (FileOptions)0x01000000,
    ];

    [Theory]
    [MemberData(nameof(EveryOption))]
    public void Option_behaves_like_File_OpenHandle(FileOptions options)
    {
        var differences = new List<string>();
        foreach (FileMode mode in new[] { FileMode.Create, FileMode.OpenOrCreate, FileMode.Open })
        {
            foreach (bool exists in new[] { false, true })
            {
                (string expected, string actual) = OpenDifferential.Compare("file", exists,
                    path => File.OpenHandle(path, mode, FileAccess.ReadWrite, FileShare.Read, options),
                    path => SpindleFile.OpenHandle(path, mode, FileAccess.ReadWrite, FileShare.Read, options),
                    handle => System.IO.RandomAccess.Write(handle, "written"u8, 3));
                if (expected != actual)
                {
                    differences.Add($"{mode}/exists={exists}:\n  System.IO: {expected}\n  Spindle:   {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public void WriteThrough_opens_with_O_SYNC_and_nothing_else_does()
    {
        using var directory = new TempDirectory();
        using (SafeFileHandle handle = SpindleFile.OpenHandle(directory.File("a"), FileMode.Create, FileAccess.Write, FileShare.Read, FileOptions.WriteThrough))
        {
            Assert.Equal(TestLibc.O_SYNC, TestLibc.StatusFlags(handle) & TestLibc.O_SYNC);
        }
        using (SafeFileHandle handle = SpindleFile.OpenHandle(directory.File("b"), FileMode.Create, FileAccess.Write, FileShare.Read,
            FileOptions.SequentialScan | FileOptions.Asynchronous | FileOptions.Encrypted))
        {
            Assert.Equal(0, TestLibc.StatusFlags(handle) & TestLibc.O_SYNC);
        }
    }

    [Fact]
    public void DeleteOnClose_removes_the_file_when_the_handle_closes_and_FileStream_sees_it()
    {
        using var directory = new TempDirectory();
        string path = directory.File("temp");
        SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read, FileOptions.DeleteOnClose);
        using (var stream = new FileStream(handle, FileAccess.ReadWrite))
        {
            stream.Write("abc"u8);
            stream.Flush();
            Assert.True(File.Exists(path));
            Assert.Equal(path, stream.Name);
        }
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void DeleteOnClose_does_not_delete_a_file_it_failed_to_open()
    {
        // A sharing violation must leave the other owner's file alone, in both libraries.
        foreach (bool spindleFirst in new[] { false, true })
        {
            using var directory = new TempDirectory();
            string path = directory.File("locked");
            File.WriteAllBytes(path, OpenDifferential.InitialContent);
            using SafeFileHandle owner = spindleFirst
                ? SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None)
                : File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None);
            Outcome expected = Outcome.Of(() => File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.DeleteOnClose).Dispose());
            Outcome actual = Outcome.Of(() => SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.DeleteOnClose).Dispose());
            Assert.Equal(expected, actual);
            Assert.Equal("IOException", actual.ExceptionType);
            Assert.True(File.Exists(path));
        }
    }

    [Fact]
    public void Asynchronous_handle_is_accepted_by_FileStream_as_async()
    {
        using var directory = new TempDirectory();
        using SafeFileHandle system = File.OpenHandle(directory.File("a"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, FileOptions.Asynchronous);
        using SafeFileHandle spindle = SpindleFile.OpenHandle(directory.File("b"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, FileOptions.Asynchronous);
        Assert.Equal(system.IsAsync, spindle.IsAsync);
        Assert.Equal(
            Outcome.Of(() => new FileStream(system, FileAccess.ReadWrite, 4096, isAsync: system.IsAsync).IsAsync),
            Outcome.Of(() => new FileStream(spindle, FileAccess.ReadWrite, 4096, isAsync: spindle.IsAsync).IsAsync));
    }
}
