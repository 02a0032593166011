using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using SysRandomAccess = System.IO.RandomAccess;

namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// One seeded random program on handles: an open with random mode, access, share, options and
/// preallocation, then random <c>RandomAccess</c> calls (sync and async, single buffer and
/// scatter/gather, lengths, flushes, a second open, concurrent disjoint writers, use after close).
/// Every step runs on System.IO first and then on Spindle on every engine; the results, the exception
/// types (and whether they were thrown or returned in the task) and the bytes on disk must agree.
/// </summary>
public sealed class RandomAccessProgram : DifferentialProgram
{
    private const int Block = 4096; // direct-I/O programs use multiples of this for offsets and lengths

    // Whether Spindle's handle is O_DIRECT in this program: then every offset, length and (on Spindle's side) buffer
    // is aligned, and the results must still be System.IO's (on a buffered handle) exactly.
    private bool _direct;
    private readonly List<IMemoryOwner<byte>> _rented = []; // Spindle's aligned buffers of the current step

    private RandomAccessProgram(long seed, FuzzSide[] sides, FuzzTotals totals, string testName)
        : base(seed, sides, totals, testName)
    {
    }

    protected override void AfterStep()
    {
        foreach (IMemoryOwner<byte> owner in _rented)
        {
            owner.Dispose();
        }
        _rented.Clear();
    }

    /// <summary>
    /// The count and the buffers' bytes. Beyond the count, a buffered read leaves the buffer alone (and Spindle must
    /// too, so the whole buffer is compared); an O_DIRECT read past the end of the file may zero whole blocks there
    /// (the kernel does), so direct programs compare only the bytes read.
    /// </summary>
    private string ReadResult(long n, Memory<byte>[] buffers)
    {
        if (!_direct)
        {
            return $"read {n} {string.Join(" ", buffers.Select(b => Hash(b.Span)))}";
        }
        long left = n;
        var parts = new List<string>();
        foreach (Memory<byte> buffer in buffers)
        {
            int take = (int)Math.Clamp(left, 0, buffer.Length);
            parts.Add(Hash(buffer.Span[..take]));
            left -= take;
        }
        return $"read {n} {string.Join(" ", parts)}";
    }

    private int OpSize() => _direct ? Block * _choices.Random.Next(0, 4) : _choices.Size();

    private long OpOffset() => _direct ? (long)Block * _choices.Random.Next(0, 11) : _choices.Offset(_length);

    private int[] OpSplit(int total) => _direct ? _choices.Split(total / Block).Select(blocks => blocks * Block).ToArray() : _choices.Split(total);

    /// <summary>A buffer to read into, filled with 0xCC: aligned on Spindle's side of a direct program.</summary>
    private Memory<byte> ReadBuffer(FuzzSide side, int size)
    {
        if (!_direct || side.IsReference)
        {
            return Filled(size);
        }
        IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(Math.Max(size, 1));
        _rented.Add(owner);
        Memory<byte> buffer = owner.Memory[..size];
        buffer.Span.Fill(0xCC);
        return buffer;
    }

    /// <summary>The bytes to write: the array itself, or an aligned copy on Spindle's side of a direct program.</summary>
    private ReadOnlyMemory<byte> WriteBuffer(FuzzSide side, byte[] data)
    {
        if (!_direct || side.IsReference)
        {
            return data;
        }
        Memory<byte> buffer = ReadBuffer(side, data.Length);
        data.CopyTo(buffer);
        return buffer;
    }

    /// <summary>Runs the program of <paramref name="seed"/> on <paramref name="sides"/> (the System.IO reference first).</summary>
    /// <exception cref="FuzzDifference">A side disagreed with System.IO.</exception>
    public static async Task Run(long seed, FuzzSide[] sides, FuzzTotals totals, string testName)
    {
        var program = new RandomAccessProgram(seed, sides, totals, testName);
        try
        {
            await program.Run();
        }
        finally
        {
            foreach (FuzzSide side in sides)
            {
                side.EndProgram();
            }
        }
        totals.AddProgram();
    }

    private async Task Run()
    {
        FuzzChoices c = _choices;
        ResetFiles();

        if (!await Open())
        {
            await Step("end (open failed)", _ => Done("ok"));
            return;
        }

        int operations = c.Random.Next(1, 11);
        for (int i = 0; i < operations; i++)
        {
            await NextOperation();
        }

        foreach (FuzzSide side in _sides)
        {
            side.EndProgram();
        }
        await Step("close", _ => Done("ok"));
    }

    private async Task<bool> Open()
    {
        FuzzChoices c = _choices;
        FileMode mode = c.Mode();
        FileAccess access = c.Access();
        FileShare share = c.Share();
        FileOptions options = c.Options();
        long preallocation = c.Preallocation();
        bool viaOptions = c.Chance(40);
        int faultSeed = c.Random.Next();
        // Faults that a correct library absorbs without a visible difference: EINTR anywhere, short writes.
        bool faults = c.Chance(30);
        _direct = c.Chance(10) && !Portable.PassThrough.Enabled; // the same draws in either mode; no O_DIRECT under the pass-through
        if (_direct)
        {
            _totals.AddDirect();
            viaOptions = true;  // DirectIO is an option of the options object
            faults = false;     // a halved O_DIRECT write would be misaligned, which no kernel does
        }

        await Step($"open {mode} {access} {share} {options} prealloc={preallocation}{(viaOptions ? " (options object)" : "")}{(_direct ? " DirectIO" : "")}{(faults ? " with EINTR/short-write faults" : "")}", side =>
        {
            SafeFileHandle handle;
            if (side.IsReference && viaOptions)
            {
                // System.IO has no OpenHandle(path, options): its counterpart is FileStream(path, FileStreamOptions),
                // which validates the options (and names them) as SpindleFile.OpenHandle(path, options) does.
                var stream = new FileStream(side.Path, new FileStreamOptions { Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation });
                handle = stream.SafeFileHandle;
                side.KeepAlive(stream);
            }
            else if (side.IsReference)
            {
                handle = File.OpenHandle(side.Path, mode, access, share, options, preallocation);
            }
            else if (viaOptions)
            {
                handle = SpindleFile.OpenHandle(side.Path, new SpindleFileOptions
                {
                    Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation, Engine = side.Engine!.Value,
                    DirectIO = _direct,
                });
            }
            else
            {
                handle = SpindleFile.OpenHandle(side.Path, mode, access, share, options, preallocation);
            }
            side.Opened(handle, faults && !side.IsReference ? new RandomFaultPlan(faultSeed, 10, 10, 0, shortReads: false) : null);
            return Done("opened");
        }, compareParamNames: !viaOptions);
        return _sides[0].Handle is not null;
    }

    private Task NextOperation()
    {
        FuzzChoices c = _choices;
        bool async = c.Chance(50);
        int roll = c.Random.Next(100);
        return roll switch
        {
            < 20 => Read(async),
            < 28 => ReadScatter(async),
            < 50 => Write(async),
            < 62 => WriteGather(async),
            < 70 => Step("GetLength", side => Done($"length {Length(side)}")),
            < 79 => SetLength(),
            < 80 => Step("FlushToDisk", side =>
            {
                if (side.IsReference) SysRandomAccess.FlushToDisk(side.Handle!); else SpindleRandomAccess.FlushToDisk(side.Handle!);
                return Done("flushed");
            }),
            < 89 => ConcurrentWriters(async),
            < 97 => OpenSecond(),
            _ => Step("close the handle (later calls see a closed handle)", side =>
            {
                side.CloseHandle();
                return Done("closed");
            }),
        };
    }

    private static long Length(FuzzSide side) => side.IsReference ? SysRandomAccess.GetLength(side.Handle!) : SpindleRandomAccess.GetLength(side.Handle!);

    private Task Read(bool async)
    {
        int size = OpSize();
        long offset = OpOffset();
        return Step($"Read{(async ? "Async" : "")}({size} bytes at {offset})", side =>
        {
            Memory<byte> buffer = ReadBuffer(side, size);
            SafeFileHandle handle = side.Handle!;
            if (!async)
            {
                int n = side.IsReference ? SysRandomAccess.Read(handle, buffer.Span, offset) : SpindleRandomAccess.Read(handle, buffer.Span, offset);
                return Done(ReadResult(n, [buffer]));
            }
            return side.IsReference
                ? Then(SysRandomAccess.ReadAsync(handle, buffer, offset), n => ReadResult(n, [buffer]))
                : Then(SpindleRandomAccess.ReadAsync(handle, buffer, offset, side.Engine!.Value), n => ReadResult(n, [buffer]));
        });
    }

    private Task ReadScatter(bool async)
    {
        int[] sizes = OpSplit(OpSize());
        long offset = OpOffset();
        return Step($"Read{(async ? "Async" : "")}([{string.Join(", ", sizes)}] at {offset})", side =>
        {
            Memory<byte>[] buffers = sizes.Select(s => ReadBuffer(side, s)).ToArray();
            SafeFileHandle handle = side.Handle!;
            string Result(long n) => ReadResult(n, buffers);
            if (!async)
            {
                return Done(Result(side.IsReference ? SysRandomAccess.Read(handle, buffers, offset) : SpindleRandomAccess.Read(handle, buffers, offset)));
            }
            return side.IsReference
                ? Then(SysRandomAccess.ReadAsync(handle, buffers, offset), Result)
                : Then(SpindleRandomAccess.ReadAsync(handle, buffers, offset, side.Engine!.Value), Result);
        });
    }

    private Task Write(bool async)
    {
        byte[] data = _choices.Bytes(OpSize());
        long offset = OpOffset();
        return Step($"Write{(async ? "Async" : "")}({data.Length} bytes at {offset})", side =>
        {
            SafeFileHandle handle = side.Handle!;
            ReadOnlyMemory<byte> bytes = WriteBuffer(side, data);
            if (!async)
            {
                if (side.IsReference) SysRandomAccess.Write(handle, bytes.Span, offset); else SpindleRandomAccess.Write(handle, bytes.Span, offset);
                return Done("written");
            }
            return side.IsReference
                ? Then(SysRandomAccess.WriteAsync(handle, bytes, offset), "written")
                : Then(SpindleRandomAccess.WriteAsync(handle, bytes, offset, side.Engine!.Value), "written");
        });
    }

    private Task WriteGather(bool async)
    {
        int[] sizes = OpSplit(OpSize());
        byte[][] data = sizes.Select(_choices.Bytes).ToArray();
        long offset = OpOffset();
        return Step($"Write{(async ? "Async" : "")}([{string.Join(", ", sizes)}] at {offset})", side =>
        {
            SafeFileHandle handle = side.Handle!;
            ReadOnlyMemory<byte>[] buffers = data.Select(d => WriteBuffer(side, d)).ToArray();
            if (!async)
            {
                if (side.IsReference) SysRandomAccess.Write(handle, buffers, offset); else SpindleRandomAccess.Write(handle, buffers, offset);
                return Done("written");
            }
            return side.IsReference
                ? Then(SysRandomAccess.WriteAsync(handle, buffers, offset), "written")
                : Then(SpindleRandomAccess.WriteAsync(handle, buffers, offset, side.Engine!.Value), "written");
        });
    }

    private Task SetLength()
    {
        long length = _choices.NewLength();
        return Step($"SetLength({length})", side =>
        {
            if (side.IsReference) SysRandomAccess.SetLength(side.Handle!, length); else SpindleRandomAccess.SetLength(side.Handle!, length);
            return Done("set");
        });
    }

    /// <summary>Writers on several threads (or tasks in flight together) to disjoint regions: the result must equal the writes in any order.</summary>
    private Task ConcurrentWriters(bool async)
    {
        int count = _choices.Random.Next(2, 7);
        long at = _direct ? OpOffset() : _choices.Random.Next(0, FuzzChoices.MaxOffset);
        var regions = new (long Offset, byte[] Data)[count];
        for (int i = 0; i < count; i++)
        {
            regions[i] = (at, _choices.Bytes(OpSize()));
            at += regions[i].Data.Length + (_direct ? _choices.Pick(0, Block) : _choices.Pick(0, 0, 1, 511, 4096));
        }
        return Step($"{count} concurrent {(async ? "async " : "")}writers [{string.Join(", ", regions.Select(r => $"{r.Data.Length}@{r.Offset}"))}]", side =>
        {
            SafeFileHandle handle = side.Handle!;
            ReadOnlyMemory<byte>[] bytes = regions.Select(r => WriteBuffer(side, r.Data)).ToArray();
            Task[] writes = regions.Select((r, i) => async
                ? (side.IsReference ? SysRandomAccess.WriteAsync(handle, bytes[i], r.Offset) : SpindleRandomAccess.WriteAsync(handle, bytes[i], r.Offset, side.Engine!.Value)).AsTask()
                : Task.Run(() =>
                {
                    if (side.IsReference) SysRandomAccess.Write(handle, bytes[i].Span, r.Offset); else SpindleRandomAccess.Write(handle, bytes[i].Span, r.Offset);
                })).ToArray();
            // Report every writer's failure, sorted, so that the order the threads ran in does not matter.
            return Then(new ValueTask(Task.WhenAll(writes).ContinueWith(t =>
            {
                if (t.IsFaulted)
                {
                    throw new AggregateException(t.Exception!.InnerExceptions.OrderBy(e => e.GetType().Name));
                }
            }, TaskScheduler.Default)), "written");
        });
    }

    /// <summary>A second handle on the same file, closed at once: sharing violations and truncation must match.</summary>
    private Task OpenSecond()
    {
        FileMode mode = _choices.Pick(FileMode.Open, FileMode.OpenOrCreate, FileMode.Truncate, FileMode.Append);
        FileAccess access = _choices.Access();
        FileShare share = _choices.Share();
        return Step($"second open {mode} {access} {share}", side =>
        {
            using SafeFileHandle second = side.IsReference
                ? File.OpenHandle(side.Path, mode, access, share)
                : SpindleFile.OpenHandle(side.Path, mode, access, share);
            return Done("opened");
        });
    }
}
