using System.Buffers;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Syscalls;
using Spindle.Tests.Infrastructure;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Lifetime;

/// <summary>
/// The system-call layer's lifetime rules (docs/contributing.md): a handle disposed during a call keeps its descriptor
/// until the call returns, a lease keeps it until released exactly once, and every pinned buffer is unpinned exactly once.
/// </summary>
public class SyscallLifetimeTests
{
    [Fact]
    public Task A_handle_disposed_while_a_read_waits_in_the_kernel_keeps_its_descriptor_until_the_read_returns() => Bounded(() =>
    {
        using var dir = new TempDirectory();
        string fifo = dir.File("fifo");
        Assert.Equal(0, TestLibc.MkFifo(fifo, Convert.ToInt32("600", 8)));
        // O_RDWR: the open does not wait for a writer, and the read waits for data.
        SafeFileHandle handle = File.OpenHandle(fifo, FileMode.Open, FileAccess.ReadWrite);
        int fd = (int)handle.DangerousGetHandle();
        int tid = 0;
        int read = -1;
        var reader = new Thread(() =>
        {
            Volatile.Write(ref tid, Libc.GetTid());
            read = PositionalIo.Read(handle, new byte[16], -1, fifo);
        });
        reader.Start();
        WaitUntilInReadSyscall(() => Volatile.Read(ref tid));

        handle.Dispose();
        Assert.False(handle.IsClosed); // the read holds a reference: the close waits for it
        Assert.Equal(fifo, DescriptorTarget(fd));

        using (var writer = new FileStream(fifo, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0))
        {
            writer.Write([1, 2, 3]);
            reader.Join();
        }
        Assert.Equal(3, read);
        Assert.True(handle.IsClosed);
        Assert.NotEqual(fifo, DescriptorTarget(fd)); // released with the call: closed (or the number reused by another file)
        return Task.CompletedTask;
    });

    [Fact]
    public void A_lease_keeps_a_disposed_handles_descriptor_open_and_is_released_exactly_once()
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, [1]);
        SafeFileHandle handle = File.OpenHandle(path);
        int fd = (int)handle.DangerousGetHandle();
        HandleLease lease = HandleLease.Acquire(handle);
        Assert.Same(handle, lease.Handle);

        handle.Dispose();
        Assert.False(handle.IsClosed);
        Assert.Equal(path, DescriptorTarget(fd));
        lease.Release();
        Assert.True(handle.IsClosed);
        Assert.Null(lease.Handle);
        Assert.NotEqual(path, DescriptorTarget(fd));
        lease.Release(); // a second release finds nothing: the handle's count is not driven below zero
        Assert.Throws<ObjectDisposedException>(() => HandleLease.Acquire(handle));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    [InlineData(8)]   // the most pinned with `fixed`
    [InlineData(9)]   // the first pinned through a pooled array
    [InlineData(40)]  // more iovecs than the stack holds
    public unsafe void A_call_unpins_every_buffer_exactly_once(int count)
    {
        var managers = Enumerable.Range(0, count).Select(i => new CountingMemory(16 + i)).ToArray();
        Memory<byte>[] buffers = managers.Select(m => m.Memory).ToArray();
        var call = new Describe();
        long total = PinnedIovecs.Call(new ScatterBuffers(buffers), count, ref call);

        Assert.Equal(buffers.Sum(b => (long)b.Length), total);
        Assert.All(managers, m => Assert.Equal((1, 1), (m.Pins, m.Unpins)));
        Assert.All(managers, m => Assert.Equal(1, m.PinnedDuringCall));
    }

    [Fact]
    public unsafe void Held_pins_stay_until_disposed_and_a_second_dispose_does_nothing()
    {
        var managers = Enumerable.Range(0, 6).Select(i => new CountingMemory(100 + i)).ToArray();
        ReadOnlyMemory<byte>[] buffers = [.. managers.Select(m => (ReadOnlyMemory<byte>)m.Memory)];
        IoVector* storage = stackalloc IoVector[4]; // too small: the pins bring their own iovecs
        PinnedIovecs pinned = PinnedIovecs.Pin(new GatherBuffers(buffers), buffers.Length, storage, 4);

        Assert.Equal(6, pinned.Count);
        Assert.Equal(buffers.Sum(b => (long)b.Length), PinnedIovecs.TotalOf(pinned.Vectors, pinned.Count));
        Assert.True(pinned.Vectors != storage);
        for (int i = 0; i < 6; i++)
        {
            Assert.Equal((nuint)buffers[i].Length, pinned.Vectors[i].Count);
            Assert.True(managers[i].IsPinned((nint)pinned.Vectors[i].Base));
        }
        Assert.All(managers, m => Assert.Equal(0, m.Unpins));

        pinned.Dispose();
        pinned.Dispose();
        Assert.All(managers, m => Assert.Equal((1, 1), (m.Pins, m.Unpins)));
    }

    [Fact]
    public unsafe void A_buffer_that_refuses_to_pin_leaves_the_ones_before_it_unpinned()
    {
        var good = new CountingMemory(10);
        var refusing = new CountingMemory(10, refuse: true);
        Memory<byte>[] buffers = [good.Memory, good.Memory, refusing.Memory];
        IoVector* storage = stackalloc IoVector[4];

        Assert.Throws<InvalidOperationException>(() => PinnedIovecs.Pin(new ScatterBuffers(buffers), 3, storage, 4));
        Assert.Equal((2, 2), (good.Pins, good.Unpins));
    }

    // The call the pins are for: checks that each buffer is pinned while it runs, and returns the total length.
    private unsafe struct Describe : IIovecCall
    {
        public long Run(IoVector* vectors, int count)
        {
            for (int i = 0; i < count; i++)
            {
                CountingMemory.Owning((nint)vectors[i].Base)?.SawPinnedDuringCall();
            }
            return PinnedIovecs.TotalOf(vectors, count);
        }
    }

    // Native memory that counts its pins, so that a test sees every Pin matched by one Unpin.
    private sealed unsafe class CountingMemory : MemoryManager<byte>
    {
        private static readonly List<CountingMemory> s_live = [];
        private readonly byte* _memory;
        private readonly int _length;
        private readonly bool _refuse;
        private int _pinned;

        internal CountingMemory(int length, bool refuse = false)
        {
            _memory = (byte*)NativeMemory.AllocZeroed((nuint)length);
            _length = length;
            _refuse = refuse;
            lock (s_live)
            {
                s_live.Add(this);
            }
        }

        internal int Pins { get; private set; }

        internal int Unpins { get; private set; }

        internal int PinnedDuringCall { get; private set; }

        internal bool IsPinned(nint address) => _pinned > 0 && address == (nint)_memory;

        internal void SawPinnedDuringCall() => PinnedDuringCall += _pinned > 0 ? 1 : 0;

        internal static CountingMemory? Owning(nint address)
        {
            lock (s_live)
            {
                return s_live.LastOrDefault(m => (nint)m._memory == address);
            }
        }

        public override Span<byte> GetSpan() => new(_memory, _length);

        public override MemoryHandle Pin(int elementIndex = 0)
        {
            if (_refuse)
            {
                throw new InvalidOperationException("this memory cannot be pinned");
            }
            Pins++;
            _pinned++;
            return new MemoryHandle(_memory + elementIndex, pinnable: this);
        }

        public override void Unpin()
        {
            Unpins++;
            _pinned--;
        }

        protected override void Dispose(bool disposing)
        {
        }
    }

    // What /proc says descriptor fd is (a path), or null when it is not open.
    private static string? DescriptorTarget(int fd)
    {
        try
        {
            return new FileInfo($"/proc/self/fd/{fd}").LinkTarget;
        }
        catch (IOException)
        {
            return null;
        }
    }

    // Until the thread is in read(2): /proc/self/task/<tid>/syscall starts with the call's number while it runs one.
    private static void WaitUntilInReadSyscall(Func<int> tid)
    {
        string readNumber = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? "0" : "63";
        while (true)
        {
            int id = tid();
            if (id != 0)
            {
                string state = File.ReadAllText($"/proc/self/task/{id}/syscall");
                if (state.Split(' ')[0] == readNumber)
                {
                    return;
                }
            }
            Thread.Sleep(1);
        }
    }
}
