using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// One side of a differential run: System.IO (the reference, <see cref="Engine"/> null) or Spindle on one
/// engine. It owns its file, the handle under test and a raw descriptor that reads the bytes on disk
/// without taking part in <c>flock</c>-based sharing.
/// </summary>
public sealed class FuzzSide(string path, IoEngine? engine) : IDisposable
{
    private SafeFileHandle? _checker;
    private IDisposable? _faults;
    private IDisposable? _owner;
    private IDisposable? _overlap;
    private byte[] _disk = new byte[128 * 1024];

    public string Path { get; } = path;

    /// <summary>The engine for asynchronous calls, or null for the System.IO reference.</summary>
    public IoEngine? Engine { get; } = engine;

    public bool IsReference => Engine is null;

    public string Name => Engine?.ToString() ?? "System.IO";

    public SafeFileHandle? Handle { get; private set; }

    /// <summary>The stream under test, for stream programs.</summary>
    public Stream? Stream { get; private set; }

    /// <summary>A stream program opened its stream; <paramref name="fd"/> is the descriptor to arm, when known.</summary>
    internal void Opened(Stream stream, int fd, FaultPlan? faults)
    {
        Stream = stream;
        OpenChecker();
        _faults = faults is null || fd < 0 ? null : SyscallFaults.Arm(fd, faults);
    }

    internal void Opened(SafeFileHandle handle, FaultPlan? faults)
    {
        Handle = handle;
        OpenChecker();
        _faults = faults is null ? null : SyscallFaults.Arm((int)handle.DangerousGetHandle(), faults);
    }

    /// <summary>Something that owns the handle under test (System.IO's FileStream for the options route), disposed with it.</summary>
    internal void KeepAlive(IDisposable owner) => _owner = owner;

    /// <summary>Stops injecting faults (after the stream under test was disposed by the program itself).</summary>
    internal void Disarm()
    {
        _faults?.Dispose();
        _faults = null;
    }

    private void OpenChecker()
    {
        // The io_uring side keeps a request counted as in flight, so that its requests go to the ring even
        // alone (a lone request runs on a pool thread, which the Auto and ThreadPool sides cover).
        if (Engine == IoEngine.IoUring && _overlap is null)
        {
            _overlap = HeldFileRequest.Hold();
        }
        int fd = Libc.Open(Path, OpenFlags.O_RDONLY | OpenFlags.O_CLOEXEC, 0);
        _checker = fd >= 0 ? new SafeFileHandle(fd, ownsHandle: true) : null;
    }

    /// <summary>
    /// Closes the handle under test. Faults are disarmed first: once the descriptor is closed its number can be
    /// reused at once by another test running in parallel, which must not inherit them.
    /// </summary>
    public void CloseHandle()
    {
        Disarm();
        _overlap?.Dispose();
        _overlap = null;
        try
        {
            Stream?.Dispose();
        }
        finally
        {
            Handle?.Dispose();
            _owner?.Dispose();
            _owner = null;
        }
    }

    /// <summary>The file's bytes as the disk has them now (empty when it does not exist), without allocating per call.</summary>
    public ReadOnlySpan<byte> Disk(out bool exists)
    {
        exists = _checker is not null || File.Exists(Path);
        if (_checker is null)
        {
            return exists ? File.ReadAllBytes(Path) : ReadOnlySpan<byte>.Empty;
        }
        long length = System.IO.RandomAccess.GetLength(_checker);
        if (length > _disk.Length)
        {
            _disk = new byte[length];
        }
        int total = 0;
        while (total < length)
        {
            int n = System.IO.RandomAccess.Read(_checker, _disk.AsSpan(total, (int)length - total), total);
            if (n == 0)
            {
                break;
            }
            total += n;
        }
        return _disk.AsSpan(0, total);
    }

    /// <summary>Ends the program: closes both descriptors; the file stays for the next program to reset.</summary>
    public void EndProgram()
    {
        try
        {
            CloseHandle();
        }
        catch (IOException)
        {
            // A stream whose final flush fails (e.g. a write at an impossible position) is closed anyway.
        }
        Handle = null;
        Stream = null;
        _checker?.Dispose();
        _checker = null;
    }

    public void Dispose() => EndProgram();
}
