using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// Thousands of seeded random operation sequences applied to <see cref="FileStream"/> and
/// <see cref="SpindleFileStream"/> side by side: every result, exception type, position, length and the
/// final bytes must agree. A failure names its seed and replays the operations.
/// </summary>
public class DifferentialStreamTests
{
    private static readonly int[] s_bufferSizes = [0, 1, 2, 3, 7, 16, 64, 100, 512, 4096];

    [Theory]
    [InlineData(0, 700)]
    [InlineData(700, 700)]
    [InlineData(1400, 700)]
    public async Task Random_operation_sequences_match_FileStream(int firstSeed, int count)
    {
        using var dir = new TempDirectory();
        for (int seed = firstSeed; seed < firstSeed + count; seed++)
        {
            await RunSequence(dir, seed);
        }
    }

    internal static async Task RunSequence(TempDirectory dir, int seed)
    {
        var random = new Random(seed);
        int bufferSize = s_bufferSizes[random.Next(s_bufferSizes.Length)];
        bool useAsync = random.Next(2) == 0;
        IoEngine engine = (IoEngine)random.Next(4);
        int shape = random.Next(10);
        (FileMode mode, FileAccess access) = shape switch
        {
            0 => (FileMode.Append, FileAccess.Write),
            1 => (FileMode.Open, FileAccess.Read),
            2 => (FileMode.Open, FileAccess.Write),
            _ => (FileMode.Open, FileAccess.ReadWrite),
        };

        string systemPath = dir.File($"system-{seed}");
        string spindlePath = dir.File($"spindle-{seed}");
        byte[] initial = new byte[random.Next(0, 3 * Math.Max(bufferSize, 8))];
        random.NextBytes(initial);
        File.WriteAllBytes(systemPath, initial);
        File.WriteAllBytes(spindlePath, initial);

        var log = new StringBuilder();
        log.Append($"seed {seed}: bufferSize {bufferSize}, useAsync {useAsync}, engine {engine}, {mode}/{access}, initial {initial.Length} bytes\n");
        FileOptions options = useAsync ? FileOptions.Asynchronous : FileOptions.None;
        FileStream system;
        SpindleFileStream spindle;
        if (shape == 3)
        {
            // From a handle whose OS offset is somewhere in the file: that offset becomes the position.
            long offset = random.Next(0, initial.Length + 1);
            SafeFileHandle systemHandle = File.OpenHandle(systemPath, mode, access, FileShare.Read, options);
            SafeFileHandle spindleHandle = SpindleFile.OpenHandle(spindlePath, mode, access, FileShare.Read, options);
            Libc.LSeek(systemHandle, offset, LinuxConstants.SEEK_SET);
            Libc.LSeek(spindleHandle, offset, LinuxConstants.SEEK_SET);
            log.Append($"from handles at offset {offset}\n");
            system = new FileStream(systemHandle, access, bufferSize, useAsync);
            spindle = new SpindleFileStream(spindleHandle, access, bufferSize, useAsync);
        }
        else
        {
            system = new FileStream(systemPath, mode, access, FileShare.Read, bufferSize, options);
            spindle = new SpindleFileStream(spindlePath, new SpindleFileOptions
            {
                Mode = mode,
                Access = access,
                BufferSize = bufferSize,
                Options = options,
                Engine = engine,
            });
        }
        try
        {
            int operations = random.Next(10, 50);
            for (int i = 0; i < operations; i++)
            {
                var step = new Step(random, bufferSize);
                (StreamOutcome expected, StreamOutcome actual) = await step.Apply(system, spindle);
                log.Append($"  {i}: {step} -> {expected}\n");
                Check(expected, actual, "result", log);
                Check(StreamOutcome.Of(() => system.Position), StreamOutcome.Of(() => spindle.Position), "Position", log);
                Check(StreamOutcome.Of(() => system.Length), StreamOutcome.Of(() => spindle.Length), "Length", log);
            }
        }
        finally
        {
            Check(await StreamOutcome.OfAsync(() => system.DisposeAsync().AsTask()),
                await StreamOutcome.OfAsync(() => spindle.DisposeAsync().AsTask()), "DisposeAsync", log);
        }
        byte[] expectedBytes = File.ReadAllBytes(systemPath);
        byte[] actualBytes = File.ReadAllBytes(spindlePath);
        if (!expectedBytes.AsSpan().SequenceEqual(actualBytes))
        {
            Assert.Fail($"{log}final bytes differ:\n  System.IO {Convert.ToHexString(expectedBytes)}\n  Spindle   {Convert.ToHexString(actualBytes)}");
        }
        File.Delete(systemPath);
        File.Delete(spindlePath);
    }

    private static void Check(StreamOutcome expected, StreamOutcome actual, string what, StringBuilder log)
    {
        if (expected != actual)
        {
            Assert.Fail($"{log}{what}: System.IO {expected}, Spindle {actual}");
        }
    }

    /// <summary>One random operation with its arguments drawn up front, so both streams get the same.</summary>
    private sealed class Step
    {
        private readonly int _kind;
        private readonly int _size;
        private readonly int _offset;
        private readonly int _arrayLength;
        private readonly long _position;
        private readonly SeekOrigin _origin;
        private readonly byte[] _data;

        internal Step(Random random, int bufferSize)
        {
            _kind = random.Next(22);
            int around = Math.Max(bufferSize, 4);
            _size = random.Next(0, 2 * around + 3);
            _offset = random.Next(0, 3);
            _arrayLength = _size + _offset + random.Next(0, 3);
            // Mostly valid arguments, sometimes not, so that validation is compared too.
            if (random.Next(30) == 0)
            {
                _arrayLength = Math.Max(0, _size + _offset - 1);
            }
            _origin = (SeekOrigin)random.Next(3);
            _position = random.Next(-3 * around, 6 * around);
            if (_kind == 13 && random.Next(10) == 0)
            {
                _position = -1;
            }
            _data = new byte[_arrayLength];
            random.NextBytes(_data);
        }

        public override string ToString() => $"{Name} size {_size} offset {_offset} array {_arrayLength} position {_position} origin {_origin}";

        private string Name => _kind switch
        {
            0 or 1 => "Write(byte[])",
            2 => "Write(span)",
            3 => "WriteAsync(byte[])",
            4 => "WriteAsync(memory)",
            5 => "WriteByte",
            6 or 7 => "Read(byte[])",
            8 => "Read(span)",
            9 => "ReadAsync(byte[])",
            10 => "ReadAsync(memory)",
            11 => "ReadByte",
            12 => "Seek",
            13 => "Position=",
            14 => "SetLength",
            15 => "Flush",
            16 => "FlushAsync",
            17 => "Flush(true)",
            18 => "CopyTo",
            19 => "BeginRead/EndRead",
            20 => "BeginWrite/EndWrite",
            _ => "CopyToAsync",
        };

        internal async Task<(StreamOutcome, StreamOutcome)> Apply(Stream system, Stream spindle)
            => (await ApplyTo(system), await ApplyTo(spindle));

        private async Task<StreamOutcome> ApplyTo(Stream stream)
        {
            switch (_kind)
            {
                case 0:
                case 1:
                    return StreamOutcome.Of(() => stream.Write(_data, _offset, _size));
                case 2:
                    return StreamOutcome.Of(() => stream.Write(Slice()));
                case 3:
                    return await StreamOutcome.OfAsync(() => stream.WriteAsync(_data, _offset, _size));
                case 4:
                    return await StreamOutcome.OfAsync(() => stream.WriteAsync(Slice().ToArray().AsMemory()).AsTask());
                case 5:
                    return StreamOutcome.Of(() => stream.WriteByte((byte)_size));
                case 6:
                case 7:
                    return ReadInto(buffer => stream.Read(buffer, _offset, _size));
                case 8:
                    return ReadInto(buffer => stream.Read(SliceOf(buffer)));
                case 9:
                    return await ReadIntoAsync(buffer => stream.ReadAsync(buffer, _offset, _size));
                case 10:
                    return await ReadIntoAsync(buffer => stream.ReadAsync(buffer.AsMemory(_offset, _size)).AsTask());
                case 11:
                    return StreamOutcome.Of(() => stream.ReadByte());
                case 12:
                    return StreamOutcome.Of(() => stream.Seek(_position, _origin));
                case 13:
                    return StreamOutcome.Of(() => stream.Position = _position);
                case 14:
                    return StreamOutcome.Of(() => stream.SetLength(Math.Abs(_position)));
                case 15:
                    return StreamOutcome.Of(stream.Flush);
                case 16:
                    return await StreamOutcome.OfAsync(() => stream.FlushAsync());
                case 17:
                    return StreamOutcome.Of(() =>
                    {
                        if (stream is FileStream fileStream)
                        {
                            fileStream.Flush(flushToDisk: true);
                        }
                        else
                        {
                            ((SpindleFileStream)stream).Flush(flushToDisk: true);
                        }
                    });
                case 18:
                    return StreamOutcome.Of(() =>
                    {
                        var copy = new MemoryStream();
                        stream.CopyTo(copy);
                        return copy.ToArray();
                    });
                case 19:
                    return await ReadIntoAsync(buffer => Task.Factory.FromAsync(stream.BeginRead, stream.EndRead, buffer, _offset, _size, null));
                case 20:
                    return await StreamOutcome.OfAsync(() => Task.Factory.FromAsync(stream.BeginWrite, stream.EndWrite, _data, _offset, _size, null));
                default:
                    return await StreamOutcome.OfAsync(async () =>
                    {
                        var copy = new MemoryStream();
                        await stream.CopyToAsync(copy, Math.Max(1, _size));
                        return copy.ToArray();
                    });
            }
        }

        private ReadOnlySpan<byte> Slice() => _data.AsSpan(_offset, _size);

        private Span<byte> SliceOf(byte[] buffer) => buffer.AsSpan(_offset, _size);

        // The whole buffer is compared, so bytes a short read must leave alone are checked too.
        private StreamOutcome ReadInto(Func<byte[], int> read)
        {
            byte[] buffer = Sentinel();
            return StreamOutcome.Of(() => read(buffer) + " " + Convert.ToHexString(buffer));
        }

        private async Task<StreamOutcome> ReadIntoAsync(Func<byte[], Task<int>> read)
        {
            byte[] buffer = Sentinel();
            return await StreamOutcome.OfAsync(async () => await read(buffer) + " " + Convert.ToHexString(buffer));
        }

        private byte[] Sentinel()
        {
            byte[] buffer = new byte[_arrayLength];
            buffer.AsSpan().Fill(0xCD);
            return buffer;
        }
    }
}
