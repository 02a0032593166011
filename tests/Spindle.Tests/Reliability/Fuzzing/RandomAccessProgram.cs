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
    private RandomAccessProgram(long seed, FuzzSide[] sides, FuzzTotals totals, string testName)
        : base(seed, sides, totals, testName)
    {
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

        await Step($"open {mode} {access} {share} {options} prealloc={preallocation}{(viaOptions ? " (options object)" : "")}{(faults ? " with EINTR/short-write faults" : "")}", side =>
        {
            SafeFileHandle handle;
            if (side.IsReference && viaOptions)
            {
                // The options object validates its setters as FileStreamOptions does.
                var o = new FileStreamOptions { Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation };
                handle = File.OpenHandle(side.Path, o.Mode, o.Access, o.Share, o.Options, o.PreallocationSize);
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
                });
            }
            else
            {
                handle = SpindleFile.OpenHandle(side.Path, mode, access, share, options, preallocation);
            }
            side.Opened(handle, faults && !side.IsReference ? new RandomFaultPlan(faultSeed, 10, 10, 0, shortReads: false) : null);
            return Done("opened");
        });
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
        int size = _choices.Size();
        long offset = _choices.Offset(_length);
        return Step($"Read{(async ? "Async" : "")}({size} bytes at {offset})", side =>
        {
            byte[] buffer = Filled(size);
            SafeFileHandle handle = side.Handle!;
            if (!async)
            {
                int n = side.IsReference ? SysRandomAccess.Read(handle, buffer, offset) : SpindleRandomAccess.Read(handle, buffer, offset);
                return Done($"read {n} {Hash(buffer)}");
            }
            return side.IsReference
                ? Then(SysRandomAccess.ReadAsync(handle, buffer, offset), n => $"read {n} {Hash(buffer)}")
                : Then(SpindleRandomAccess.ReadAsync(handle, buffer, offset, side.Engine!.Value), n => $"read {n} {Hash(buffer)}");
        });
    }

    private Task ReadScatter(bool async)
    {
        int[] sizes = _choices.Split(_choices.Size());
        long offset = _choices.Offset(_length);
        return Step($"Read{(async ? "Async" : "")}([{string.Join(", ", sizes)}] at {offset})", side =>
        {
            Memory<byte>[] buffers = sizes.Select(s => (Memory<byte>)Filled(s)).ToArray();
            SafeFileHandle handle = side.Handle!;
            string Result(long n) => $"read {n} {string.Join(" ", buffers.Select(b => Hash(b.Span)))}";
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
        byte[] data = _choices.Bytes(_choices.Size());
        long offset = _choices.Offset(_length);
        return Step($"Write{(async ? "Async" : "")}({data.Length} bytes at {offset})", side =>
        {
            SafeFileHandle handle = side.Handle!;
            if (!async)
            {
                if (side.IsReference) SysRandomAccess.Write(handle, data, offset); else SpindleRandomAccess.Write(handle, data, offset);
                return Done("written");
            }
            return side.IsReference
                ? Then(SysRandomAccess.WriteAsync(handle, data, offset), "written")
                : Then(SpindleRandomAccess.WriteAsync(handle, data, offset, side.Engine!.Value), "written");
        });
    }

    private Task WriteGather(bool async)
    {
        int[] sizes = _choices.Split(_choices.Size());
        ReadOnlyMemory<byte>[] buffers = sizes.Select(s => (ReadOnlyMemory<byte>)_choices.Bytes(s)).ToArray();
        long offset = _choices.Offset(_length);
        return Step($"Write{(async ? "Async" : "")}([{string.Join(", ", sizes)}] at {offset})", side =>
        {
            SafeFileHandle handle = side.Handle!;
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
        long at = _choices.Random.Next(0, FuzzChoices.MaxOffset);
        var regions = new (long Offset, byte[] Data)[count];
        for (int i = 0; i < count; i++)
        {
            regions[i] = (at, _choices.Bytes(_choices.Size()));
            at += regions[i].Data.Length + _choices.Pick(0, 0, 1, 511, 4096);
        }
        return Step($"{count} concurrent {(async ? "async " : "")}writers [{string.Join(", ", regions.Select(r => $"{r.Data.Length}@{r.Offset}"))}]", side =>
        {
            SafeFileHandle handle = side.Handle!;
            Task[] writes = regions.Select(r => async
                ? (side.IsReference ? SysRandomAccess.WriteAsync(handle, r.Data, r.Offset) : SpindleRandomAccess.WriteAsync(handle, r.Data, r.Offset, side.Engine!.Value)).AsTask()
                : Task.Run(() =>
                {
                    if (side.IsReference) SysRandomAccess.Write(handle, r.Data, r.Offset); else SpindleRandomAccess.Write(handle, r.Data, r.Offset);
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
