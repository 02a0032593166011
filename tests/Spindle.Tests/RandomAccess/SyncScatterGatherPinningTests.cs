using System.Buffers;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>
/// Short scatter/gather lists pin each buffer per stack frame: arrays with <c>fixed</c>, MemoryManager
/// memory through <c>Pin</c>. Mixed lists, slices and empty buffers must read and write what System.IO does.
/// </summary>
public class SyncScatterGatherPinningTests
{
    // Native memory, so that the MemoryManager branch really hands the kernel a pointer that is not in an array.
    private sealed unsafe class NativeManager : MemoryManager<byte>
    {
        private readonly byte* _pointer;
        private readonly int _length;

        public NativeManager(int length)
        {
            _length = length;
            _pointer = (byte*)NativeMemory.AllocZeroed((nuint)Math.Max(length, 1));
        }

        public int Pins { get; private set; }

        public override Span<byte> GetSpan() => new(_pointer, _length);

        public override MemoryHandle Pin(int elementIndex = 0)
        {
            Pins++;
            return new MemoryHandle(_pointer + elementIndex);
        }

        public override void Unpin()
        {
        }

        protected override void Dispose(bool disposing) => NativeMemory.Free(_pointer);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(5)]
    [InlineData(8)]
    [InlineData(9)]
    public void Mixed_array_and_native_buffers_match_System_IO(int count)
    {
        using var directory = new TempDirectory();
        const long offset = 777;
        byte[][] disk = new byte[2][];
        string[] results = new string[2];
        foreach ((int index, RandomAccessApi api) in new[] { (0, RandomAccessApi.SystemIo), (1, RandomAccessApi.Spindle) })
        {
            var managers = new List<NativeManager>();
            try
            {
                var sources = new ReadOnlyMemory<byte>[count];
                var targets = new Memory<byte>[count];
                var rng = new Random(count);
                for (int i = 0; i < count; i++)
                {
                    int length = i == 1 ? 0 : rng.Next(1, 300);
                    if (i % 2 == 0)
                    {
                        var manager = new NativeManager(length);
                        rng.NextBytes(manager.GetSpan());
                        managers.Add(manager);
                        sources[i] = manager.Memory;
                        var target = new NativeManager(length);
                        managers.Add(target);
                        targets[i] = target.Memory;
                    }
                    else
                    {
                        // A slice from the middle of a larger array: the pointer must start at the slice.
                        var array = new byte[length + 10];
                        rng.NextBytes(array);
                        sources[i] = array.AsMemory(5, length);
                        targets[i] = new byte[length + 4].AsMemory(2, length);
                    }
                }
                string path = directory.File(api.Name);
                using (SafeFileHandle handle = api.Open(path, FileMode.CreateNew, FileAccess.ReadWrite))
                {
                    api.Write(handle, sources, offset);
                    long read = api.Read(handle, targets, offset);
                    byte[] expected = sources.SelectMany(m => m.ToArray()).ToArray();
                    byte[] got = targets.SelectMany(m => m.ToArray()).Take((int)read).ToArray();
                    Assert.Equal(expected.AsSpan(0, (int)read).ToArray(), got);
                    results[index] = $"read={read} length={api.GetLength(handle)}";
                }
                if (api == RandomAccessApi.Spindle)
                {
                    // Native memory is pinned through its manager, once per write and once per read.
                    Assert.All(managers, m => Assert.Equal(1, m.Pins));
                }
                disk[index] = File.ReadAllBytes(path);
            }
            finally
            {
                foreach (NativeManager manager in managers)
                {
                    ((IDisposable)manager).Dispose();
                }
            }
        }
        Assert.Equal(results[0], results[1]);
        Assert.Equal(disk[0], disk[1]);
    }
}
