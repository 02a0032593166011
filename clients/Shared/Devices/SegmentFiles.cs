using System.Collections.Concurrent;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Clients.Devices;

/// <summary>How a device opens its segment files.</summary>
/// <param name="DirectIO">Open them <c>O_DIRECT</c> where the file system allows it.</param>
/// <param name="OpenOptions">The flags every handle opens with (<see cref="FileOptions.WriteThrough"/> for <c>O_SYNC</c>).</param>
/// <param name="Preallocate">Reserve a whole segment's blocks when a segment file is created.</param>
/// <param name="DeleteOnClose">Delete the files when they are closed.</param>
internal readonly record struct SegmentFileOptions(bool DirectIO, FileOptions OpenOptions, bool Preallocate, bool DeleteOnClose);

/// <summary>
/// A device's open segment files (<c>name.0</c>, <c>name.1</c>, … as FASTER's and Garnet's devices name them), one
/// handle per segment opened on first use, and a second, buffered one per segment for requests <c>O_DIRECT</c> cannot take.
/// </summary>
internal sealed class SegmentFiles
{
    private readonly ConcurrentDictionary<int, SafeFileHandle> _segments = new(); // open segment files by id (O_DIRECT when asked for and allowed)
    private readonly ConcurrentDictionary<int, SafeFileHandle> _buffered = new(); // buffered handles for misaligned requests, opened on first need
    private readonly Func<int, string> _pathOf;   // a segment id's file name
    private readonly SegmentFileOptions _options;
    private readonly object _openLock = new();   // serialises opening, so each file is opened once

    /// <param name="pathOf">The file name of a segment id (the device base class's <c>GetSegmentFilename</c>).</param>
    /// <param name="options">How to open the files.</param>
    internal SegmentFiles(Func<int, string> pathOf, SegmentFileOptions options)
    {
        _pathOf = pathOf;
        _options = options;
        IsDirectIO = options.DirectIO;
    }

    /// <summary>Whether the files bypass the page cache: asked for, and not refused by the file system for any file opened so far.</summary>
    internal bool IsDirectIO { get; private set; }

    /// <summary>The handle of segment <paramref name="segmentId"/>, opening (or creating, preallocated to <paramref name="segmentSize"/> when asked) the file on first use.</summary>
    internal SafeFileHandle Get(int segmentId, long segmentSize)
    {
        if (_segments.TryGetValue(segmentId, out SafeFileHandle? handle))
        {
            return handle;
        }
        lock (_openLock)
        {
            if (!_segments.TryGetValue(segmentId, out handle))
            {
                handle = Open(segmentId, segmentSize);
                _segments[segmentId] = handle;
            }
            return handle;
        }
    }

    /// <summary>
    /// A buffered handle on segment <paramref name="segmentId"/>'s file, for requests <c>O_DIRECT</c> cannot take (the
    /// kernel keeps it coherent with the direct one: direct I/O writes back and invalidates cached pages of its range first).
    /// </summary>
    internal SafeFileHandle GetBuffered(int segmentId, long segmentSize)
    {
        if (_buffered.TryGetValue(segmentId, out SafeFileHandle? handle))
        {
            return handle;
        }
        lock (_openLock)
        {
            if (!_buffered.TryGetValue(segmentId, out handle))
            {
                Get(segmentId, segmentSize); // creates the file as a segment (preallocated) if it is new
                handle = SpindleFile.OpenHandle(_pathOf(segmentId), new SpindleFileOptions
                {
                    Mode = FileMode.Open,
                    Access = FileAccess.ReadWrite,
                    Share = FileShare.ReadWrite | FileShare.Delete,
                    Options = _options.OpenOptions,
                });
                _buffered[segmentId] = handle;
            }
            return handle;
        }
    }

    /// <summary>
    /// Closes segment <paramref name="segmentId"/>'s handles and deletes its file; a file already gone, or one that
    /// cannot be deleted, is treated as gone, as FASTER's and Garnet's devices do. Operations still in flight keep the
    /// descriptor open until the kernel completes them (Spindle references the handle per operation).
    /// </summary>
    internal void Remove(int segmentId)
    {
        if (_segments.TryRemove(segmentId, out SafeFileHandle? handle))
        {
            handle.Dispose();
        }
        if (_buffered.TryRemove(segmentId, out SafeFileHandle? buffered))
        {
            buffered.Dispose();
        }
        try
        {
            File.Delete(_pathOf(segmentId));
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <summary>Closes every file (deleting it when the options say so).</summary>
    internal void CloseAll()
    {
        foreach (int segment in _buffered.Keys)
        {
            if (_buffered.TryRemove(segment, out SafeFileHandle? buffered))
            {
                buffered.Dispose();
            }
        }
        foreach (int segment in _segments.Keys)
        {
            if (_segments.TryRemove(segment, out SafeFileHandle? handle))
            {
                handle.Dispose();
                if (_options.DeleteOnClose)
                {
                    File.Delete(_pathOf(segment));
                }
            }
        }
    }

    /// <summary>
    /// The segments that exist on disk for the prefix <paramref name="filename"/>: the first of the last contiguous run
    /// of ids and the last id, or null when there are none (a device's <c>RecoverDevice</c> option).
    /// </summary>
    internal static (int Start, int End)? FindRange(string filename)
    {
        var prefix = new FileInfo(filename);
        if (prefix.Directory is not { Exists: true } directory)
        {
            return null;
        }
        var ids = new List<int>();
        foreach (FileInfo file in directory.EnumerateFiles(prefix.Name + ".*"))
        {
            if (int.TryParse(file.Name.AsSpan(prefix.Name.Length + 1), out int id))
            {
                ids.Add(id);
            }
        }
        if (ids.Count == 0)
        {
            return null;
        }
        ids.Sort();
        int start = ids[0];
        for (int i = 1; i < ids.Count; i++)
        {
            if (ids[i] != ids[i - 1] + 1)
            {
                start = ids[i];
            }
        }
        return (start, ids[^1]);
    }

    private SafeFileHandle Open(int segmentId, long segmentSize)
    {
        string path = _pathOf(segmentId);
        var open = new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite | FileShare.Delete,
            Options = _options.OpenOptions,
            DirectIO = _options.DirectIO,
            DirectIOFallback = true,
        };
        SafeFileHandle handle;
        if (_options.Preallocate && segmentSize > 0 && !File.Exists(path))
        {
            // Preallocation applies to new files only (System.IO's rule), so a new segment is created as such.
            open.Mode = FileMode.CreateNew;
            open.PreallocationSize = segmentSize;
            try
            {
                handle = SpindleFile.OpenHandle(path, open);
            }
            catch (IOException) when (File.Exists(path))
            {
                open.Mode = FileMode.OpenOrCreate; // another process created it first: open what is there
                open.PreallocationSize = 0;
                handle = SpindleFile.OpenHandle(path, open);
            }
        }
        else
        {
            handle = SpindleFile.OpenHandle(path, open);
        }
        if (_options.DirectIO && !SpindleFile.IsDirectIO(handle))
        {
            IsDirectIO = false;
        }
        return handle;
    }
}
