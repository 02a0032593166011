using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>Every FileMode × FileAccess × FileShare, on a missing and an existing file, against File.OpenHandle.</summary>
public class OpenModeAccessShareTests
{
    private static readonly FileShare[] Shares =
    [
        FileShare.None, FileShare.Read, FileShare.Write, FileShare.ReadWrite, FileShare.Delete,
        FileShare.ReadWrite | FileShare.Delete, FileShare.Inheritable, FileShare.Read | FileShare.Inheritable,
        (FileShare)0x20, (FileShare)(-1),
    ];

    public static TheoryData<FileMode, FileAccess> ModesAndAccesses()
    {
        var data = new TheoryData<FileMode, FileAccess>();
        foreach (FileMode mode in Enum.GetValues<FileMode>())
        {
            foreach (FileAccess access in Enum.GetValues<FileAccess>())
            {
                data.Add(mode, access);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(ModesAndAccesses))]
    public void Open_matches_File_OpenHandle_for_every_share_on_missing_and_existing_files(FileMode mode, FileAccess access)
    {
        var differences = new List<string>();
        foreach (FileShare share in Shares)
        {
            foreach (bool exists in new[] { false, true })
            {
                (string expected, string actual) = OpenDifferential.Compare("file", exists,
                    path => File.OpenHandle(path, mode, access, share),
                    path => SpindleFile.OpenHandle(path, mode, access, share));
                if (expected != actual)
                {
                    differences.Add($"{mode}/{access}/{share}/exists={exists}:\n  System.IO: {expected}\n  Spindle:   {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Theory]
    [InlineData((FileMode)0, FileAccess.Read)]
    [InlineData((FileMode)7, FileAccess.Read)]
    [InlineData(FileMode.Open, (FileAccess)0)]
    [InlineData(FileMode.Open, (FileAccess)4)]
    [InlineData((FileMode)7, (FileAccess)4)]
    public void Out_of_range_enums_throw_like_File_OpenHandle(FileMode mode, FileAccess access)
    {
        (string expected, string actual) = OpenDifferential.Compare("file", true,
            path => File.OpenHandle(path, mode, access),
            path => SpindleFile.OpenHandle(path, mode, access));
        Assert.Contains("ArgumentOutOfRangeException", expected);
        Assert.Equal(expected, actual);
    }

    [Fact]
    public void Options_object_opens_like_FileStream_with_FileStreamOptions()
    {
        // FileStream(path, FileStreamOptions) is System.IO's only opener that takes an options object.
        var differences = new List<string>();
        foreach (FileMode mode in Enum.GetValues<FileMode>())
        {
            foreach (FileAccess access in Enum.GetValues<FileAccess>())
            {
                foreach (UnixFileMode? create in new UnixFileMode?[] { null, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute })
                {
                    foreach (bool exists in new[] { false, true })
                    {
                        var system = new FileStreamOptions { Mode = mode, Access = access, UnixCreateMode = create, PreallocationSize = 0 };
                        var spindle = new SpindleFileOptions { Mode = mode, Access = access, UnixCreateMode = create };
                        (string expected, string actual) = OpenDifferential.Compare("file", exists,
                            path => new FileStream(path, system).SafeFileHandle,
                            path => SpindleFile.OpenHandle(path, spindle));
                        if (expected != actual)
                        {
                            differences.Add($"{mode}/{access}/{create}/exists={exists}:\n  System.IO: {expected}\n  Spindle:   {actual}");
                        }
                    }
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }
}
