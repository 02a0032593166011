using Microsoft.Win32.SafeHandles;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>Which file systems count as local (their close does no I/O), learned once per block device.</summary>
public class LocalFileSystemsTests
{
    [Fact]
    public void A_temporary_file_is_on_a_local_file_system_and_procfs_is_not()
    {
        using var directory = new TempDirectory();
        string path = directory.File("file");
        File.WriteAllBytes(path, [1]);
        Assert.True(IsLocal(path) == (OpenedFile.KindOf(FileSystemType(path)) is FileSystemKind.LocalDisk or FileSystemKind.Memory));
        Assert.False(IsLocal("/proc/self/status")); // procfs: not a disk or memory file system
        Assert.False(IsLocal("/proc/self/status")); // asked again (an anonymous device is never cached), and agrees
    }

    [Fact]
    public async Task A_read_only_asynchronous_streams_dispose_on_a_local_file_system_closes_on_the_callers_thread()
    {
        using var directory = new TempDirectory();
        string path = directory.File("file");
        File.WriteAllBytes(path, [1, 2, 3]);
        if (!IsLocal(path))
        {
            Console.WriteLine("the temporary directory is not on a local file system: its close may wait, nothing to check");
            return;
        }
        var stream = new SpindleFileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.Asynchronous);
        byte[] buffer = new byte[3];
        Assert.Equal(3, await stream.ReadAsync(buffer));
        ValueTask dispose = stream.DisposeAsync();
        Assert.True(dispose.IsCompletedSuccessfully); // no ring round trip
        Assert.Equal(0, AsyncOpenCancellationTests.OpenDescriptors(path));
    }

    private static bool IsLocal(string path)
    {
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        Assert.Equal(0, Libc.FStat(handle, out _, out _, out ulong device));
        // The open's answer (a block device's cached kind), else what is asked when first needed.
        FileSystemKind kind = LocalFileSystems.KindOf(device, handle);
        if (kind == FileSystemKind.Unknown)
        {
            kind = LocalFileSystems.Ask(handle, readable: true);
        }
        return kind is FileSystemKind.LocalDisk or FileSystemKind.Memory;
    }

    private static unsafe long FileSystemType(string path)
    {
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        byte* buffer = stackalloc byte[256];
        Assert.Equal(0, Libc.FStatFs(handle, buffer));
        return *(long*)buffer;
    }
}
