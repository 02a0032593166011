using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.Syscalls;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// A thread's own small ring for its synchronous batches of reads (router row 17): the thread writes an SQE per read,
/// hands them all to the kernel and waits for all of their completions in one <c>io_uring_enter</c>, as fio does, with
/// no other thread involved. Made on the thread's first such batch (SINGLE_ISSUER: only that thread enters it) and
/// freed by the finalizer once the thread has exited. Nothing is in flight outside a call: each call returns only
/// after the kernel has completed every read it was handed, so no buffer or descriptor is let go while in use.
/// </summary>
internal sealed unsafe class OwnRing
{
    /// <summary>SQEs per submission; a larger batch goes to the kernel in rounds of this many.</summary>
    internal const int Entries = 32;

    private const int NotCompleted = int.MinValue;

    [ThreadStatic]
    private static OwnRing? t_ring;
    private static volatile bool s_refused; // the kernel refused io_uring: this process reads such batches one by one

    private Ring? _ring;
    private bool _reading; // a batch is being placed or waited for: a nested one (user code in a buffer's Pin) reads alone
    private readonly MemoryHandle[] _pins = new MemoryHandle[Entries];
    private readonly HandleLease[] _held = new HandleLease[Entries]; // the kernel reads each slot's descriptor until its CQE
    private readonly int[] _results = new int[Entries];

    private OwnRing(Ring ring) => _ring = ring;

    /// <summary>The calling thread's ring if it has made one (tests and diagnostics).</summary>
    internal static OwnRing? OfThisThread => t_ring;

    /// <summary>Whether a batch is being placed or waited for on this ring (tests).</summary>
    internal bool IsPlacing => _reading;

    /// <summary>Rounds of reads handed to the kernel together (tests and diagnostics).</summary>
    internal long Rounds { get; private set; }

    /// <summary>Reads the kernel completed through this ring (tests and diagnostics).</summary>
    internal long Completions { get; private set; }

    ~OwnRing() => _ring?.Dispose(); // the thread has exited: nothing can be in flight

    /// <summary>The calling thread's ring, made on first use; null where the kernel refuses io_uring.</summary>
    internal static OwnRing? ForThisThread()
    {
        OwnRing? own = t_ring;
        if (own is null && !s_refused)
        {
            Ring? ring = Ring.TryCreate(Entries, shared: false, completionEntries: 2 * Entries, out int errno);
            if (ring is null)
            {
                // Out of descriptors or memory for now: this batch reads one by one, the next asks again. Anything
                // else is the kernel refusing io_uring, for good.
                s_refused = errno is not (Errno.EMFILE or Errno.ENFILE or Errno.ENOMEM or Errno.EAGAIN);
                return null;
            }
            t_ring = own = new OwnRing(ring);
        }
        return own;
    }

    /// <summary>
    /// Reads the requests at <paramref name="members"/>, each after the <paramref name="prefixes"/> bytes the page cache
    /// already gave it, and stores each one's result: the bytes read, or the outcome of reading it again on this thread
    /// when the ring reported an error (so that every error is the exception a lone synchronous read throws).
    /// </summary>
    internal void Read(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results, ReadOnlySpan<int> members, ReadOnlySpan<int> prefixes)
    {
        bool nested = _reading;
        _reading = true;
        try
        {
            ReadRounds(requests, results, members, prefixes, nested);
        }
        finally
        {
            _reading = nested;
        }
    }

    private void ReadRounds(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results, ReadOnlySpan<int> members, ReadOnlySpan<int> prefixes, bool nested)
    {
        for (int start = 0; start < members.Length; start += Entries)
        {
            int count = Math.Min(Entries, members.Length - start);
            if (_ring is null || nested)
            {
                for (int slot = start; slot < start + count; slot++)
                {
                    results[members[slot]] = ReadAlone(requests[members[slot]], prefixes[slot]); // the ring was retired, or is in use below us
                }
                continue;
            }
            ReadRound(requests, results, members.Slice(start, count), prefixes.Slice(start, count));
        }
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
            // Every slot this round touched, placed or not: a placement that threw half-way (a buffer that would not
            // pin) still lets go of what it took.
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

    // Hands the placed SQEs to the kernel and returns once every one it took has completed. A submission the kernel
    // refuses for good leaves the rest unsubmitted: the ring is then retired (closing it discards them) and they are
    // read on this thread.
    private void SubmitAndWait(int placed)
    {
        Ring ring = _ring!;
        int reaped = 0;
        bool refused = false;
        Rounds++;
        while (true)
        {
            while (ring.TryTakeCompletion(out ulong slot, out int result))
            {
                _results[(int)slot] = result;
                reaped++;
                Completions++;
            }
            int inKernel = placed - (int)ring.Unsubmitted;
            if (reaped == (refused ? inKernel : placed))
            {
                break;
            }
            int entered = refused ? ring.Wait((uint)(inKernel - reaped)) : ring.Enter((uint)(placed - reaped), wait: true);
            if (entered < 0 && !refused && entered != -Errno.EINTR)
            {
                // EAGAIN, EBUSY: the kernel is short of something; wait for what it holds, then try again. Anything else,
                // or nothing held to wait for: give up on the ring.
                refused = entered is not (-Errno.EAGAIN or -Errno.EBUSY) || inKernel == reaped;
            }
        }
        if (refused)
        {
            _ring = null;
            t_ring = null;
            ring.Dispose();
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
