using System.Buffers;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.Syscalls;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// A small ring one synchronous batch of reads has to itself (router row 17): the caller writes an SQE per read and
/// waits for all of them in one <c>io_uring_enter</c>, as fio does. Rings are rented per batch from a process-wide pool
/// (at most one idle ring per processor; one beyond is closed at once). A batch returns only after the kernel completed
/// every read it was handed, so no buffer or descriptor is let go in use, and a ring passes to another thread empty.
/// </summary>
internal sealed unsafe class OwnRing
{
    /// <summary>SQEs per submission; a larger batch goes to the kernel in rounds of this many.</summary>
    internal const int Entries = EngineTunables.OwnRingEntries;

    private const int NotCompleted = int.MinValue;

    private static readonly OwnRing?[] s_idle = new OwnRing?[Environment.ProcessorCount]; // rings between batches; null is a free slot
    private static volatile bool s_refused; // the kernel refused io_uring: this process reads such batches one by one

    private Ring? _ring; // null once retired: the kernel refused a submission for good
    private readonly MemoryHandle[] _pins = new MemoryHandle[Entries];
    private readonly HandleLease[] _held = new HandleLease[Entries]; // the kernel reads each slot's descriptor until its CQE
    private readonly int[] _results = new int[Entries];

    private OwnRing(Ring ring) => _ring = ring;

    /// <summary>Whether a batch may be read through a ring: false once the kernel refused io_uring to this process.</summary>
    internal static bool MayRent => !s_refused;

    /// <summary>
    /// Reads the requests at <paramref name="members"/> (each after its cached prefix) through a rented ring, or one by
    /// one where none can be made; a read the ring failed is read again here, to throw what a lone read throws.
    /// </summary>
    internal static void Read(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results, ReadOnlySpan<int> members, ReadOnlySpan<int> prefixes)
    {
        OwnRing? own = Rent();
        if (own is null)
        {
            ReadAlone(requests, results, members, prefixes);
            return;
        }
        EngineProbe.Current?.OwnRingBatch(placing: true);
        try
        {
            for (int start = 0; start < members.Length; start += Entries)
            {
                int count = Math.Min(Entries, members.Length - start);
                if (own._ring is null)
                {
                    ReadAlone(requests, results, members.Slice(start, count), prefixes.Slice(start, count)); // the ring was retired
                    continue;
                }
                own.ReadRound(requests, results, members.Slice(start, count), prefixes.Slice(start, count));
            }
        }
        finally
        {
            EngineProbe.Current?.OwnRingBatch(placing: false);
            own.Return();
        }
    }

    private static OwnRing? Rent()
    {
        OwnRing?[] idle = s_idle;
        for (int i = 0; i < idle.Length; i++)
        {
            if (Volatile.Read(ref idle[i]) is not null && Interlocked.Exchange(ref idle[i], null) is OwnRing own)
            {
                return own;
            }
        }
        if (s_refused)
        {
            return null;
        }
        Ring? ring = Ring.TryCreate(Entries, out int errno, completionEntries: 2 * Entries);
        if (ring is null)
        {
            // Out of descriptors or memory: this batch reads one by one. Anything else is a refusal for good.
            s_refused = errno is not (Errno.EMFILE or Errno.ENFILE or Errno.ENOMEM or Errno.EAGAIN);
            return null;
        }
        return new OwnRing(ring);
    }

    private void Return()
    {
        if (_ring is null)
        {
            return;
        }
        OwnRing?[] idle = s_idle;
        for (int i = 0; i < idle.Length; i++)
        {
            if (Volatile.Read(ref idle[i]) is null && Interlocked.CompareExchange(ref idle[i], this, null) is null)
            {
                return;
            }
        }
        Retire();
    }

    private void Retire()
    {
        Ring ring = _ring!;
        _ring = null;
        ring.Dispose();
    }

    private void ReadRound(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results, ReadOnlySpan<int> members, ReadOnlySpan<int> prefixes)
    {
        _results.AsSpan(0, members.Length).Fill(NotCompleted);
        int placed = 0;
        try
        {
            Ring ring = _ring!;
            for (; placed < members.Length; placed++)
            {
                BatchReadRequest request = requests[members[placed]];
                _held[placed] = HandleLease.Acquire(request.Handle); // a handle closed since the checks stops here: it is read below, and fails as alone
                int prefix = prefixes[placed];
                _pins[placed] = request.Buffer.Slice(prefix).Pin();
                IoUringSqe* sqe = ring.TryGetSqe(); // never null: the ring is empty between calls and a round fits it
                sqe->Opcode = IORING_OP_READ;
                sqe->Fd = (int)request.Handle.DangerousGetHandle();
                sqe->Address = (ulong)_pins[placed].Pointer;
                sqe->Length = (uint)(request.Buffer.Length - prefix);
                sqe->Offset = (ulong)(request.FileOffset + prefix);
                sqe->UserData = (ulong)placed;
            }
        }
        catch (ObjectDisposedException)
        {
        }
        finally
        {
            if (placed > 0)
            {
                SubmitAndWait(placed);
            }
            // Every slot, placed or not: a placement that threw half-way still lets go of what it took.
            for (int slot = 0; slot < members.Length; slot++)
            {
                _pins[slot].Dispose();
                _pins[slot] = default;
                _held[slot].Release();
            }
        }
        for (int slot = 0; slot < members.Length; slot++)
        {
            int index = members[slot];
            int read = _results[slot];
            if (read >= 0)
            {
                SpindleMetrics.Operation(IoEngine.IoUring, IoDirection.Read, read, IoMechanism.Ring);
                results[index] = new BatchReadResult(prefixes[slot] + read);
            }
            else
            {
                results[index] = ReadAlone(requests[index], prefixes[slot]);
            }
        }
    }

    // Returns once every SQE the kernel took has completed. One it refuses for good retires the ring (discarding the
    // rest, read on this thread).
    private void SubmitAndWait(int placed)
    {
        Ring ring = _ring!;
        int reaped = 0;
        bool refused = false;
        while (true)
        {
            while (ring.TryTakeCompletion(out ulong slot, out int result))
            {
                _results[(int)slot] = result;
                reaped++;
            }
            int inKernel = placed - (int)ring.Unsubmitted;
            if (reaped == (refused ? inKernel : placed))
            {
                break;
            }
            int entered = refused ? ring.Wait((uint)(inKernel - reaped)) : ring.Enter((uint)(placed - reaped), wait: true);
            if (entered < 0 && !refused && entered != -Errno.EINTR)
            {
                // EAGAIN, EBUSY: wait for what the kernel holds, then again. Anything else, or nothing held: give up on the ring.
                refused = entered is not (-Errno.EAGAIN or -Errno.EBUSY) || inKernel == reaped;
            }
        }
        EngineProbe.Current?.OwnRingRound(reaped);
        if (refused)
        {
            Retire();
        }
    }

    private static void ReadAlone(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results, ReadOnlySpan<int> members, ReadOnlySpan<int> prefixes)
    {
        for (int slot = 0; slot < members.Length; slot++)
        {
            results[members[slot]] = ReadAlone(requests[members[slot]], prefixes[slot]);
        }
    }

    // A member the ring did not read, on this thread (members are on handles with positions: router row 17).
    private static BatchReadResult ReadAlone(in BatchReadRequest request, int prefix)
    {
        try
        {
            return new BatchReadResult(prefix + HandleIo.Read(request.Handle, request.Buffer.Span[prefix..], request.FileOffset + prefix));
        }
        catch (Exception e)
        {
            return new BatchReadResult(e);
        }
    }
}
