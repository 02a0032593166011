using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;

namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// One seeded random program on streams: <see cref="FileStream"/> against <see cref="SpindleFileStream"/>
/// on every engine, opened from a path (options object or constructor arguments) or from a handle, with
/// a random buffer size (0, 1, around 512 and 4096...), then random reads and writes of every form
/// (array, span, byte, sync and async), seeks, Position, Length, SetLength, flushes, CopyTo, locks,
/// exposing the handle and use after dispose. After every step the results, exceptions, Position,
/// Length and the bytes on disk must agree.
/// </summary>
public sealed class StreamProgram : DifferentialProgram
{
    private static readonly int[] BufferSizes = [0, 1, 2, 512, 4096, 4096, 4096, 4097, 8192, 16384];

    private StreamProgram(long seed, FuzzSide[] sides, FuzzTotals totals, string testName)
        : base(seed, sides, totals, testName)
    {
    }

    /// <summary>Runs the stream program of <paramref name="seed"/>.</summary>
    /// <exception cref="FuzzDifference">A side disagreed with System.IO.</exception>
    public static async Task Run(long seed, FuzzSide[] sides, FuzzTotals totals, string testName)
    {
        var program = new StreamProgram(seed, sides, totals, testName);
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
        ResetFiles();
        if (!await Open())
        {
            await Step("end (open failed)", _ => Done("ok"));
            return;
        }
        int operations = _choices.Random.Next(1, 16);
        for (int i = 0; i < operations; i++)
        {
            await NextOperation();
        }
        await FlushStep("Dispose", side =>
        {
            side.CloseHandle();
            return Done("disposed");
        });
    }

    private async Task<bool> Open()
    {
        FuzzChoices c = _choices;
        FileMode mode = c.Mode();
        FileAccess access = c.Access();
        FileShare share = c.Share();
        FileOptions options = c.Options() & ~FileOptions.DeleteOnClose;
        long preallocation = c.Chance(90) ? 0 : c.Preallocation();
        int bufferSize = c.Chance(20) ? c.Random.Next(0, 20_000) : c.Pick(BufferSizes);
        int how = c.Random.Next(3);
        bool isAsync = (options & FileOptions.Asynchronous) != 0;
        bool claimAsync = c.Chance(5) ? !isAsync : isAsync; // a handle whose async flag does not match: both must refuse
        bool faults = how == 2 && c.Chance(40);
        int faultSeed = c.Random.Next();
        // Buffered streams over O_DIRECT (Spindle's own buffer keeps the alignment) must behave as FileStream does.
        bool direct = how == 0 && c.Chance(10) && !Portable.PassThrough.Enabled;
        if (direct)
        {
            bufferSize = c.Pick(4096, 8192, 16384);
            _totals.AddDirect();
            _diskAfterEveryStep = false;
        }

        string description = how switch
        {
            0 => $"open stream (options object) {mode} {access} {share} {options} buffer={bufferSize} prealloc={preallocation}{(direct ? " DirectIO" : "")}",
            1 => $"open stream (path, {mode}, {access}, {share}, {bufferSize}, {options})",
            _ => $"open handle {mode} {access} {share} {options}, then stream (handle, {access}, {bufferSize}, isAsync: {claimAsync})" +
                (faults ? " with EINTR/short-write faults" : ""),
        };
        await Step(description, side =>
        {
            if (how == 0)
            {
                Stream stream = side.IsReference
                    ? new FileStream(side.Path, new FileStreamOptions { Mode = mode, Access = access, Share = share, Options = options, BufferSize = bufferSize, PreallocationSize = preallocation })
                    : new SpindleFileStream(side.Path, new SpindleFileOptions { Mode = mode, Access = access, Share = share, Options = options, BufferSize = bufferSize, PreallocationSize = preallocation, Engine = side.Engine!.Value, DirectIO = direct });
                side.Opened(stream, -1, null);
            }
            else if (how == 1)
            {
                Stream stream = side.IsReference
                    ? new FileStream(side.Path, mode, access, share, bufferSize, options)
                    : new SpindleFileStream(side.Path, mode, access, share, bufferSize, options);
                side.Opened(stream, -1, null);
            }
            else
            {
                SafeFileHandle handle = side.IsReference
                    ? File.OpenHandle(side.Path, mode, access, share, options)
                    : SpindleFile.OpenHandle(side.Path, mode, access, share, options);
                int fd = (int)handle.DangerousGetHandle();
                IDisposable? armed = faults && !side.IsReference ? SyscallFaults.Arm(fd, new RandomFaultPlan(faultSeed, 10, 10, 0, shortReads: false)) : null;
                try
                {
                    Stream stream = side.IsReference
                        ? new FileStream(handle, access, bufferSize, claimAsync)
                        : new SpindleFileStream(handle, access, bufferSize, claimAsync);
                    armed?.Dispose(); // re-armed by the side, which disarms before closing
                    side.Opened(stream, fd, faults && !side.IsReference ? new RandomFaultPlan(faultSeed + 1, 10, 10, 0, shortReads: false) : null);
                }
                catch
                {
                    armed?.Dispose();
                    handle.Dispose();
                    throw;
                }
            }
            return Done(State(side));
        });
        return _sides[0].Stream is not null;
    }

    private Task NextOperation()
    {
        FuzzChoices c = _choices;
        int roll = c.Random.Next(100);
        return roll switch
        {
            < 12 => Read(),
            < 16 => Step("ReadByte", side => Done($"byte {side.Stream!.ReadByte()}{State(side)}")),
            < 24 => ReadAsync(),
            < 38 => Write(),
            < 42 => WriteByte(),
            < 52 => WriteAsync(),
            < 62 => Seek(),
            < 66 => SetPosition(),
            < 69 => Step("Length", side => Done($"length {side.Stream!.Length}{State(side)}")),
            < 74 => SetLength(),
            < 79 => FlushStep("Flush()", side =>
            {
                side.Stream!.Flush();
                return Done("flushed" + State(side));
            }),
            < 80 => FlushStep("Flush(true)", side =>
            {
                if (side.Stream is FileStream f) f.Flush(flushToDisk: true); else ((SpindleFileStream)side.Stream!).Flush(flushToDisk: true);
                return Done("flushed" + State(side));
            }),
            < 84 => FlushStep("FlushAsync()", side => Then(new ValueTask(side.Stream!.FlushAsync()), () => "flushed" + State(side))),
            < 89 => CopyTo(),
            < 93 => LockUnlock(),
            < 95 => Step("SafeFileHandle (exposes the handle)", side =>
            {
                SafeFileHandle handle = side.Stream is FileStream f ? f.SafeFileHandle : ((SpindleFileStream)side.Stream!).SafeFileHandle;
                return Done($"handle closed={handle.IsClosed}{State(side)}");
            }),
            < 97 => FlushStep("Dispose, then keep using it", side =>
            {
                side.CloseHandle(); // disposes the stream, then disarms its descriptor
                return Done("disposed" + State(side));
            }),
            _ => FlushStep("DisposeAsync, then keep using it", side =>
            {
                side.Disarm(); // before the descriptor is closed (see FuzzSide.CloseHandle)
                return Then(side.Stream!.DisposeAsync(), () => "disposed" + State(side));
            }),
        };
    }

    private Task FlushStep(string description, Func<FuzzSide, ValueTask<string>> operation)
    {
        _flushStep = true;
        return Step(description, operation);
    }

    /// <summary>Position, Length and the capabilities after a step, each as a value or the exception it throws.</summary>
    private static string State(FuzzSide side)
    {
        Stream s = side.Stream!;
        return $" | pos {Try(() => s.Position)} len {Try(() => s.Length)} r{(s.CanRead ? 1 : 0)}w{(s.CanWrite ? 1 : 0)}s{(s.CanSeek ? 1 : 0)}";
    }

    private static string Try(Func<long> get)
    {
        try
        {
            return get().ToString();
        }
        catch (Exception e)
        {
            return e.GetType().Name;
        }
    }

    private (int Length, int Offset, int Count) ArraySlice()
    {
        int length = _choices.Size();
        if (_choices.Chance(3))
        {
            return (length, _choices.Random.Next(-1, length + 2), _choices.Random.Next(-1, length + 2)); // possibly invalid
        }
        int offset = _choices.Random.Next(0, length + 1);
        return (length, offset, _choices.Random.Next(0, length - offset + 1));
    }

    private Task Read()
    {
        bool span = _choices.Chance(50);
        (int length, int offset, int count) = ArraySlice();
        return Step(span ? $"Read(span of {count})" : $"Read(byte[{length}], {offset}, {count})", side =>
        {
            byte[] buffer = Filled(span ? count : length);
            int n = span ? side.Stream!.Read(buffer.AsSpan()) : side.Stream!.Read(buffer, offset, count);
            return Done($"read {n} {Hash(buffer)}{State(side)}");
        });
    }

    private Task ReadAsync()
    {
        bool memory = _choices.Chance(50);
        (int length, int offset, int count) = ArraySlice();
        return Step(memory ? $"ReadAsync(memory of {count})" : $"ReadAsync(byte[{length}], {offset}, {count})", side =>
        {
            byte[] buffer = Filled(memory ? count : length);
            return memory
                ? Then(side.Stream!.ReadAsync(buffer.AsMemory()), n => $"read {n} {Hash(buffer)}{State(side)}")
                : Then(new ValueTask<int>(side.Stream!.ReadAsync(buffer, offset, count)), n => $"read {n} {Hash(buffer)}{State(side)}");
        });
    }

    private Task Write()
    {
        bool span = _choices.Chance(50);
        (int length, int offset, int count) = ArraySlice();
        byte[] data = _choices.Bytes(length);
        return Step(span ? $"Write(span of {count})" : $"Write(byte[{length}], {offset}, {count})", side =>
        {
            if (span)
            {
                side.Stream!.Write(data.AsSpan(0, Math.Clamp(count, 0, length)));
            }
            else
            {
                side.Stream!.Write(data, offset, count);
            }
            return Done("written" + State(side));
        });
    }

    private Task WriteByte()
    {
        byte value = (byte)_choices.Random.Next(256);
        return Step($"WriteByte({value})", side =>
        {
            side.Stream!.WriteByte(value);
            return Done("written" + State(side));
        });
    }

    private Task WriteAsync()
    {
        bool memory = _choices.Chance(50);
        (int length, int offset, int count) = ArraySlice();
        byte[] data = _choices.Bytes(length);
        return Step(memory ? $"WriteAsync(memory of {count})" : $"WriteAsync(byte[{length}], {offset}, {count})", side =>
            memory
                ? Then(side.Stream!.WriteAsync(data.AsMemory(0, Math.Clamp(count, 0, length))), () => "written" + State(side))
                : Then(new ValueTask(side.Stream!.WriteAsync(data, offset, count)), () => "written" + State(side)));
    }

    private Task Seek()
    {
        SeekOrigin origin = _choices.Pick(SeekOrigin.Begin, SeekOrigin.Current, SeekOrigin.End, SeekOrigin.Begin);
        long offset = _choices.Chance(2) ? long.MinValue / 2 : origin switch
        {
            SeekOrigin.Begin => _choices.Random.Next(-2, FuzzChoices.MaxOffset),
            _ => _choices.Random.Next(-5000, 5000),
        };
        return Step($"Seek({offset}, {origin})", side => Done($"at {side.Stream!.Seek(offset, origin)}{State(side)}"));
    }

    private Task SetPosition()
    {
        long position = _choices.Chance(5) ? -1 : _choices.Offset(_length) & long.MaxValue;
        position = Math.Min(position, FuzzChoices.MaxOffset * 2L);
        return Step($"Position = {position}", side =>
        {
            side.Stream!.Position = position;
            return Done("moved" + State(side));
        });
    }

    private Task SetLength()
    {
        long length = _choices.NewLength();
        return Step($"SetLength({length})", side =>
        {
            side.Stream!.SetLength(length);
            return Done("set" + State(side));
        });
    }

    private Task CopyTo()
    {
        bool async = _choices.Chance(50);
        int bufferSize = _choices.Pick(1, 512, 4096, 81920);
        return Step($"CopyTo{(async ? "Async" : "")}(memory stream, {bufferSize})", side =>
        {
            var destination = new MemoryStream();
            if (async && KnownBugs.CopyToAsyncOnUnreadableStream && !side.Stream!.CanRead)
            {
                return Done("not tried: known bug (FoundBugTests.CopyToAsync_on_a_write_only_stream_throws_at_once_and_flushes_nothing)");
            }
            if (!async)
            {
                side.Stream!.CopyTo(destination, bufferSize);
                return Done($"copied {Hash(destination.ToArray())}{State(side)}");
            }
            return Then(new ValueTask(side.Stream!.CopyToAsync(destination, bufferSize)), () => $"copied {Hash(destination.ToArray())}{State(side)}");
        });
    }

    private Task LockUnlock()
    {
        long position = _choices.Chance(5) ? -1 : _choices.Random.Next(0, FuzzChoices.MaxOffset);
        long length = _choices.Chance(5) ? -1 : _choices.Random.Next(0, 10_000);
        return Step($"Lock({position}, {length}); Unlock", side =>
        {
            if (side.Stream is FileStream f)
            {
                f.Lock(position, length);
                f.Unlock(position, length);
            }
            else
            {
                ((SpindleFileStream)side.Stream!).Lock(position, length);
                ((SpindleFileStream)side.Stream!).Unlock(position, length);
            }
            return Done("locked and unlocked" + State(side));
        });
    }

    private static async ValueTask<string> Then(ValueTask pending, Func<string> result)
    {
        await pending;
        return result();
    }
}
