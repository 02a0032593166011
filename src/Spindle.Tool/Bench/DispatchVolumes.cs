using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>Where a dispatch cell reads: a file or block device, the bytes filled with data, and whether it is opened with O_DIRECT.</summary>
/// <param name="Path">The file or device.</param>
/// <param name="Size">Bytes the reads are spread over.</param>
/// <param name="Direct">True: O_DIRECT; false: through the page cache, warmed before each cell.</param>
/// <param name="Description">What it is, for the report (e.g. <c>tmpfs mounted for the run</c>).</param>
public sealed record DispatchTarget(string Path, long Size, bool Direct, string Description);

/// <summary>
/// The storages of the dispatch matrix, each set up on first use and torn down on <see cref="Dispose"/>
/// (a tmpfs or FUSE mount this run made is unmounted, a zram device it set up is reset and removed), which the
/// bench command reaches on Ctrl-C and SIGTERM too. A storage this machine or user cannot provide
/// gives a one-line reason instead.
/// </summary>
public sealed partial class DispatchVolumes(BenchFiles files, long size) : IDisposable
{
    private readonly Dictionary<DispatchStorage, (DispatchTarget? Target, string? Reason)> _prepared = new();
    private readonly List<string> _ownFiles = new();   // files made outside BenchFiles' directory
    private string? _mountPoint;                         // a tmpfs this run mounted
    private string? _fuseMountPoint;                     // the benchmark directory mounted through bindfs
    private (string Path, string Description)? _tmpfsFile; // the file both tmpfs storages read
    private ZramDevice? _zram;

    /// <summary>The storage's target, or throws <see cref="NotSupportedException"/> with the reason it is not available here.</summary>
    public DispatchTarget Prepare(DispatchStorage storage)
    {
        if (!_prepared.TryGetValue(storage, out var prepared))
        {
            try
            {
                prepared = (Create(storage), null);
            }
            catch (Exception e) when (e is NotSupportedException or IOException or UnauthorizedAccessException)
            {
                prepared = (null, e.Message);
            }
            _prepared[storage] = prepared;
        }
        return prepared.Target ?? throw new NotSupportedException(prepared.Reason);
    }

    private DispatchTarget Create(DispatchStorage storage)
    {
        switch (storage)
        {
            case DispatchStorage.DiskDirect:
            {
                string path = files.Source(size);
                DirectIo.OpenHandle(path).Dispose();   // NotSupportedException where the file system has no O_DIRECT
                return new DispatchTarget(path, size, Direct: true, $"a file in {files.Directory}, O_DIRECT");
            }
            case DispatchStorage.PageCache:
                return new DispatchTarget(files.Source(size), size, Direct: false, $"a file in {files.Directory}, page cache (warm)");
            case DispatchStorage.TmpfsDirect:
                return CreateOnTmpfs(direct: true);
            case DispatchStorage.TmpfsCached:
                return CreateOnTmpfs(direct: false);
            case DispatchStorage.FuseDirect:
            case DispatchStorage.FuseCached:
            {
                string path = Path.Combine(MountFuse(), Path.GetFileName(files.Source(size)));
                bool direct = storage == DispatchStorage.FuseDirect;
                if (direct)
                {
                    DirectIo.OpenHandle(path).Dispose();
                }
                return new DispatchTarget(path, size, direct, $"the file in {files.Directory} through FUSE (bindfs), {(direct ? "O_DIRECT" : "page cache (warm)")}");
            }
            case DispatchStorage.ZramDirect:
                _zram = ZramDevice.Create(Math.Max(size, 1L << 30), size);
                return new DispatchTarget(_zram.DevicePath, size, Direct: true, $"{_zram.DevicePath}, raw block device, O_DIRECT");
            default:
                throw new ArgumentOutOfRangeException(nameof(storage), storage, null);
        }
    }

    private DispatchTarget CreateOnTmpfs(bool direct)
    {
        (string path, string description) = _tmpfsFile ??= FillOnTmpfs();
        if (!direct)
        {
            return new DispatchTarget(path, size, Direct: false, description + ", page cache");
        }
        try
        {
            DirectIo.OpenHandle(path).Dispose();
        }
        catch (NotSupportedException)
        {
            throw new NotSupportedException($"tmpfs refuses O_DIRECT on this kernel (Linux {Environment.OSVersion.Version}; tmpfs accepts it since 6.6)");
        }
        return new DispatchTarget(path, size, Direct: true, description + ", O_DIRECT");
    }

    // One file on a tmpfs for both tmpfs storages.
    private (string Path, string Description) FillOnTmpfs()
    {
        string directory, description;
        if (IsTmpfs("/tmp"))
        {
            (directory, description) = ("/tmp", "/tmp (tmpfs)");
        }
        else if (IsRoot() && TryMountTmpfs(size + (16L << 20)) is { } mounted)
        {
            (directory, description) = (mounted, "a tmpfs mounted for the run (/tmp is not tmpfs)");
        }
        else if (IsTmpfs("/dev/shm"))
        {
            (directory, description) = ("/dev/shm", "/dev/shm (/tmp is not tmpfs and this user may not mount one)");
        }
        else
        {
            throw new NotSupportedException("no tmpfs: /tmp is not tmpfs, /dev/shm is missing and this user may not mount one");
        }
        string path = Path.Combine(directory, $"spindle-dispatch-{Environment.ProcessId}.dat");
        _ownFiles.Add(path);
        Fill(path, size, direct: false);
        return (path, description);
    }

    // The benchmark directory mounted again through bindfs (a FUSE file system passing every call to its daemon).
    private string MountFuse()
    {
        if (_fuseMountPoint is not null)
        {
            return _fuseMountPoint;
        }
        if (!File.Exists("/dev/fuse"))
        {
            throw new NotSupportedException("no FUSE: /dev/fuse is missing");
        }
        string mountPoint = Directory.CreateTempSubdirectory("spindle-dispatch-fuse-").FullName;
        if (Run("bindfs", files.Directory, mountPoint) is { } failure)
        {
            Directory.Delete(mountPoint);
            throw new NotSupportedException($"no FUSE file system: {failure} (bindfs is a Debian package; mounting needs root or fuse's user_allow_other)");
        }
        return _fuseMountPoint = mountPoint;
    }

    private string? TryMountTmpfs(long bytes)
    {
        string mountPoint = Directory.CreateTempSubdirectory("spindle-dispatch-").FullName;
        if (Run("mount", "-t", "tmpfs", "-o", $"size={bytes}", "tmpfs", mountPoint) is null)
        {
            _mountPoint = mountPoint;
            return mountPoint;
        }
        Directory.Delete(mountPoint);
        return null;
    }

    /// <summary>Writes <paramref name="bytes"/> of pseudo-random data (incompressible, so zram stores real pages) to <paramref name="path"/>.</summary>
    internal static void Fill(string path, long bytes, bool direct)
    {
        const int Chunk = 1 << 20;
        using var buffer = new AlignedBufferOwner(Chunk);
        var random = new Random(7);
        using Microsoft.Win32.SafeHandles.SafeFileHandle handle = direct
            ? DirectIo.OpenHandle(path)
            : File.OpenHandle(path, FileMode.Create, FileAccess.Write, FileShare.Read, FileOptions.None, bytes);
        for (long offset = 0; offset < bytes; offset += Chunk)
        {
            random.NextBytes(buffer.Memory.Span);
            System.IO.RandomAccess.Write(handle, buffer.Memory.Span[..(int)Math.Min(Chunk, bytes - offset)], offset);
        }
    }

    /// <summary>Removes what this run made: files, then the tmpfs and FUSE mounts it made, then the zram device it set up.</summary>
    public void Dispose()
    {
        foreach (string path in _ownFiles)
        {
            try
            {
                File.Delete(path);
            }
            catch (IOException)
            {
            }
        }
        _ownFiles.Clear();
        _tmpfsFile = null;
        if (_mountPoint is not null)
        {
            Run("umount", _mountPoint);
            try
            {
                Directory.Delete(_mountPoint);
            }
            catch (IOException)
            {
            }
            _mountPoint = null;
        }
        if (_fuseMountPoint is not null)
        {
            // A child killed a moment ago may still hold a file there: then the mount goes once it lets go (lazy).
            if (Run("fusermount3", "-u", _fuseMountPoint) is not null && Run("umount", _fuseMountPoint) is not null)
            {
                Run("umount", "-l", _fuseMountPoint);
            }
            try
            {
                Directory.Delete(_fuseMountPoint);
            }
            catch (IOException)
            {
            }
            _fuseMountPoint = null;
        }
        _zram?.Dispose();
        _zram = null;
    }

    private static bool IsTmpfs(string directory)
    {
        try
        {
            return Directory.Exists(directory) && new DriveInfo(directory).DriveFormat == "tmpfs";
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return false;
        }
    }

    internal static bool IsRoot() => GetEuid() == 0;

    /// <summary>Runs a system command; null when it succeeded, else its complaint.</summary>
    internal static string? Run(string program, params string[] args)
    {
        try
        {
            var start = new ProcessStartInfo(program) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
            foreach (string arg in args)
            {
                start.ArgumentList.Add(arg);
            }
            using Process process = Process.Start(start)!;
            string errors = process.StandardError.ReadToEnd();
            process.WaitForExit();
            return process.ExitCode == 0 ? null : $"{program}: {errors.Trim()}";
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            return $"{program}: {e.Message}";
        }
    }

    [LibraryImport("libc", EntryPoint = "geteuid")]
    private static partial uint GetEuid();

    // A page-aligned buffer for O_DIRECT writes, freed with the fill.
    private sealed class AlignedBufferOwner(int length) : IDisposable
    {
        private readonly AlignedBuffer _buffer = new(length, DirectIo.Alignment);

        public Memory<byte> Memory => _buffer.Memory;

        public void Dispose() => ((IDisposable)_buffer).Dispose();
    }
}

/// <summary>
/// A zram RAM block device set up for a run: a new device from <c>/sys/class/zram-control/hot_add</c>
/// (or the first unused one), a disk size, data written with O_DIRECT; <see cref="Dispose"/> resets it
/// (<c>echo 1 &gt; reset</c>, freeing its memory) and removes a device it added.
/// </summary>
public sealed class ZramDevice : IDisposable
{
    private const string Control = "/sys/class/zram-control";
    private readonly int _number;
    private readonly bool _added;   // true: hot_add made it, hot_remove takes it away
    private bool _disposed;

    private ZramDevice(int number, bool added)
    {
        _number = number;
        _added = added;
    }

    /// <summary>The device node, <c>/dev/zramN</c>.</summary>
    public string DevicePath => $"/dev/zram{_number}";

    /// <summary>Its sysfs directory.</summary>
    public string SysPath => $"/sys/block/zram{_number}";

    /// <summary>Sets up a device of <paramref name="diskSize"/> bytes with its first <paramref name="filled"/> bytes written.</summary>
    /// <exception cref="NotSupportedException">Not root, or no zram in this kernel: the message says which.</exception>
    public static ZramDevice Create(long diskSize, long filled)
    {
        if (!DispatchVolumes.IsRoot())
        {
            throw new NotSupportedException("zram needs root (setting up a RAM block device)");
        }
        if (!Directory.Exists(Control) && !Directory.Exists("/sys/block/zram0")
            && DispatchVolumes.Run("modprobe", "zram") is { } failure)
        {
            throw new NotSupportedException($"no zram in this kernel ({failure})");
        }
        ZramDevice device = Directory.Exists(Control)
            ? new ZramDevice(int.Parse(File.ReadAllText(Path.Combine(Control, "hot_add")).Trim(), CultureInfo.InvariantCulture), added: true)
            : new ZramDevice(FirstUnused() ?? throw new NotSupportedException("every zram device is in use and this kernel cannot add one"), added: false);
        try
        {
            Write(Path.Combine(device.SysPath, "disksize"), diskSize.ToString(CultureInfo.InvariantCulture));
            DispatchVolumes.Fill(device.DevicePath, filled, direct: true);
            return device;
        }
        catch
        {
            device.Dispose();
            throw;
        }
    }

    private static int? FirstUnused()
    {
        foreach (string dir in Directory.EnumerateDirectories("/sys/block", "zram*").Order())
        {
            if (File.ReadAllText(Path.Combine(dir, "disksize")).Trim() == "0"
                && int.TryParse(Path.GetFileName(dir)["zram".Length..], NumberStyles.None, CultureInfo.InvariantCulture, out int number))
            {
                return number;
            }
        }
        return null;
    }

    /// <summary>Resets the device (its memory is freed) and removes it when this run added it.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        // EBUSY while a process still has the device open (a child being killed): retry for a few seconds.
        for (int attempt = 0; ; attempt++)
        {
            try
            {
                Write(Path.Combine(SysPath, "reset"), "1");
                if (_added)
                {
                    Write(Path.Combine(Control, "hot_remove"), _number.ToString(CultureInfo.InvariantCulture));
                }
                return;
            }
            catch (IOException) when (attempt < 50)
            {
                Thread.Sleep(100);
            }
        }
    }

    // sysfs attributes take one write of the value; no truncation, no creation.
    private static void Write(string path, string value)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0);
        stream.Write(System.Text.Encoding.ASCII.GetBytes(value));
    }
}
