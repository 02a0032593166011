using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>One io_uring instance: the descriptor and its shared memory (SQ ring, CQ ring, SQEs), with the ABI's memory ordering beside each access.</summary>
internal sealed unsafe class Ring
{
    // Setup flags to try, best first (an older kernel rejects newer ones with EINVAL). CQSIZE gives pipes and sockets
    // room of their own. Rings here are entered by several threads: no SINGLE_ISSUER or DEFER_TASKRUN, and no
    // COOP_TASKRUN, under which a thread blocked in a continuation would hold back the CQEs of what it submitted.
    private static readonly uint[] s_flagSets =
    [
        IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL,
        IORING_SETUP_CQSIZE,
        0,
    ];

    /// <summary>The CQ ring size asked for with IORING_SETUP_CQSIZE (else the kernel makes it twice the SQ ring).</summary>
    internal const uint CompletionEntries = EngineTunables.RingCqEntries;

    private readonly int _fd;
    private readonly uint _features;     // IORING_FEAT_* the kernel reported
    private readonly byte* _sqRing;      // mapping of the SQ ring (and of the CQ ring with IORING_FEAT_SINGLE_MMAP)
    private readonly nuint _sqRingSize;
    private readonly byte* _cqRing;      // mapping of the CQ ring
    private readonly nuint _cqRingSize;
    private readonly IoUringSqe* _sqes;  // the SQE array
    private readonly nuint _sqesSize;

    private readonly uint* _sqHead;      // advanced by the kernel as it consumes SQEs
    private readonly uint* _sqTail;      // advanced by us to publish SQEs
    private readonly uint* _sqFlags;     // IORING_SQ_* flags, written by the kernel
    private readonly uint _sqMask;
    private readonly uint _sqEntries;
    private uint _sqLocalTail;           // our tail, published with Publish

    private readonly uint* _cqHead;      // advanced by us as we consume CQEs
    private readonly uint* _cqTail;      // advanced by the kernel as it posts CQEs
    private readonly IoUringCqe* _cqes;
    private readonly uint _cqMask;

    private Ring(int fd, in IoUringParams p, byte* sqRing, nuint sqRingSize, byte* cqRing, nuint cqRingSize, IoUringSqe* sqes, nuint sqesSize)
    {
        _fd = fd;
        _sqRing = sqRing;
        _sqRingSize = sqRingSize;
        _cqRing = cqRing;
        _cqRingSize = cqRingSize;
        _sqes = sqes;
        _sqesSize = sqesSize;
        SetupFlags = p.Flags;
        _features = p.Features;

        _sqHead = (uint*)(sqRing + p.SqOff.Head);
        _sqTail = (uint*)(sqRing + p.SqOff.Tail);
        _sqFlags = (uint*)(sqRing + p.SqOff.Flags);
        _sqMask = *(uint*)(sqRing + p.SqOff.RingMask);
        _sqEntries = *(uint*)(sqRing + p.SqOff.RingEntries);
        _sqLocalTail = *_sqTail;

        // The SQ index array maps ring slots to SQEs; slot i always holds SQE i.
        uint* array = (uint*)(sqRing + p.SqOff.Array);
        for (uint i = 0; i < _sqEntries; i++)
        {
            array[i] = i;
        }

        _cqHead = (uint*)(cqRing + p.CqOff.Head);
        _cqTail = (uint*)(cqRing + p.CqOff.Tail);
        _cqes = (IoUringCqe*)(cqRing + p.CqOff.Cqes);
        _cqMask = *(uint*)(cqRing + p.CqOff.RingMask);
        CqEntries = *(uint*)(cqRing + p.CqOff.RingEntries);
    }

    /// <summary>How many completions the CQ ring holds: the bound on operations in flight.</summary>
    internal uint CqEntries { get; }

    /// <summary>The setup flags the kernel accepted.</summary>
    internal uint SetupFlags { get; }

    /// <summary>The SQEs written but not yet handed to the kernel by <see cref="Enter"/>.</summary>
    internal uint Unsubmitted => _sqLocalTail - Volatile.Read(ref *_sqHead);

    /// <summary>Creates a ring, negotiating the setup flags; null and the errno when the kernel refuses io_uring.</summary>
    internal static Ring? TryCreate(uint entries, out int errno, uint completionEntries = CompletionEntries)
    {
        errno = Errno.ENOSYS;
        if (!IoUringSyscalls.Supported)
        {
            return null;
        }
        if (SyscallSeam.Enabled && SyscallSeam.RingSetupRefused)
        {
            errno = Errno.EPERM; // test seam: a kernel that forbids io_uring
            return null;
        }
        foreach (uint flags in s_flagSets)
        {
            IoUringParams p = default;
            p.Flags = flags;
            if ((flags & IORING_SETUP_CQSIZE) != 0)
            {
                p.CqEntries = completionEntries;
            }
            int fd = IoUringSyscalls.Setup(entries, &p);
            if (fd < 0)
            {
                errno = Errno.Last;
                if (errno == Errno.EINVAL)
                {
                    continue;
                }
                return null;
            }
            // Offset -1 as "current position" (for handles without positions) needs 5.6; so do READ and WRITE.
            if ((p.Features & IORING_FEAT_RW_CUR_POS) == 0)
            {
                Libc.Close(fd);
                errno = Errno.ENOSYS;
                return null;
            }
            Ring? ring = Map(fd, p, out errno);
            if (ring is null)
            {
                Libc.Close(fd);
            }
            return ring;
        }
        return null;
    }

    private static Ring? Map(int fd, in IoUringParams p, out int errno)
    {
        errno = 0;
        nuint sqRingSize = p.SqOff.Array + p.SqEntries * sizeof(uint);
        nuint cqRingSize = p.CqOff.Cqes + p.CqEntries * (nuint)sizeof(IoUringCqe);
        nuint sqesSize = p.SqEntries * (nuint)sizeof(IoUringSqe);
        bool single = (p.Features & IORING_FEAT_SINGLE_MMAP) != 0;
        if (single)
        {
            sqRingSize = cqRingSize = Math.Max(sqRingSize, cqRingSize);
        }
        byte* sqRing = MapRegion(fd, sqRingSize, IORING_OFF_SQ_RING, ref errno);
        byte* cqRing = single ? sqRing : MapRegion(fd, cqRingSize, IORING_OFF_CQ_RING, ref errno);
        byte* sqes = MapRegion(fd, sqesSize, IORING_OFF_SQES, ref errno);
        if (errno == 0)
        {
            return new Ring(fd, p, sqRing, sqRingSize, cqRing, single ? 0 : cqRingSize, (IoUringSqe*)sqes, sqesSize);
        }
        Unmap(sqRing, sqRingSize);
        Unmap(single ? null : cqRing, cqRingSize);
        Unmap(sqes, sqesSize);
        return null;
    }

    private static void Unmap(byte* region, nuint size)
    {
        if (region != null)
        {
            Libc.MUnmap(region, size);
        }
    }

    // Null when the mapping failed; errno keeps the first failure's.
    private static byte* MapRegion(int fd, nuint size, long offset, ref int errno)
    {
        void* address = Libc.MMap(null, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, offset);
        if (address != (void*)-1)
        {
            return (byte*)address;
        }
        errno = errno == 0 ? Errno.Last : errno;
        return null;
    }

    /// <summary>
    /// Raises the calling thread's limit of bound io-wq workers (opens, syncs) to at least <paramref name="bound"/>;
    /// returns the limit in force (0 before 5.15). The limits belong to the submitting thread: the ring's thread calls this.
    /// </summary>
    internal uint RaiseBoundWorkers(uint bound)
    {
        uint* limits = stackalloc uint[2];
        limits[0] = 0; // 0 asks for the current limits without changing them
        limits[1] = 0;
        if (IoUringSyscalls.Register(_fd, IORING_REGISTER_IOWQ_MAX_WORKERS, limits, 2) < 0)
        {
            return 0;
        }
        uint current = limits[0];
        if (current >= bound)
        {
            return current;
        }
        limits[0] = bound;
        limits[1] = 0;
        return IoUringSyscalls.Register(_fd, IORING_REGISTER_IOWQ_MAX_WORKERS, limits, 2) < 0 ? current : bound;
    }

    /// <summary>How many SQEs <see cref="TryGetSqe"/> can still hand out before the kernel consumes some.</summary>
    internal uint FreeSqes => _sqEntries - (_sqLocalTail - Volatile.Read(ref *_sqHead));

    /// <summary>The next free SQE, zeroed, or null when the SQ ring is full.</summary>
    internal IoUringSqe* TryGetSqe()
    {
        // Acquire: the kernel has finished reading the SQEs before the head it publishes.
        uint head = Volatile.Read(ref *_sqHead);
        if (_sqLocalTail - head >= _sqEntries)
        {
            return null;
        }
        IoUringSqe* sqe = &_sqes[_sqLocalTail & _sqMask];
        *sqe = default;
        _sqLocalTail++;
        return sqe;
    }

    /// <summary>Publishes the SQEs written so far and calls io_uring_enter: SQEs consumed, or -errno.</summary>
    internal int Enter(uint minComplete, bool wait)
    {
        uint toSubmit = Publish();
        // A full fence between publishing the tail and reading the kernel's flags: without it the
        // load may be reordered before the store and miss an overflow the kernel just flagged.
        Interlocked.MemoryBarrier();
        bool getEvents = wait || (Volatile.Read(ref *_sqFlags) & IORING_SQ_CQ_OVERFLOW) != 0;
        if (toSubmit == 0 && !getEvents)
        {
            return 0;
        }
        if (SyscallSeam.Enabled && SyscallSeam.FailRingEnter(out int injected))
        {
            return injected; // test seam
        }
        int result = IoUringSyscalls.Enter(_fd, toSubmit, wait ? minComplete : 0, getEvents ? IORING_ENTER_GETEVENTS : 0);
        return result < 0 ? -Errno.Last : result;
    }

    /// <summary>Waits for <paramref name="minComplete"/> completions, submitting nothing: 0 or -errno.</summary>
    internal int Wait(uint minComplete)
    {
        int result = IoUringSyscalls.Enter(_fd, 0, minComplete, IORING_ENTER_GETEVENTS);
        return result < 0 ? -Errno.Last : 0;
    }

    /// <summary>Whether <see cref="SubmitAndWait"/> can end after a time (the kernel takes a timeout with the wait).</summary>
    internal bool CanWaitWithTimeout => (_features & IORING_FEAT_EXT_ARG) != 0;

    /// <summary>Makes the SQEs written so far visible to the kernel without entering it; returns how many it has not consumed.</summary>
    internal uint Publish()
    {
        // Release: the SQE contents must be visible before the kernel sees the new tail.
        Volatile.Write(ref *_sqTail, _sqLocalTail);
        return Unsubmitted;
    }

    /// <summary>
    /// Submits <paramref name="toSubmit"/> published SQEs (fewer if another thread submitted them meanwhile) and waits for
    /// <paramref name="minComplete"/> completions, at most <paramref name="timeoutNanoseconds"/> unless negative: 0 or -errno (ETIME).
    /// </summary>
    internal int SubmitAndWait(uint toSubmit, uint minComplete, long timeoutNanoseconds)
    {
        int result = timeoutNanoseconds < 0
            ? IoUringSyscalls.Enter(_fd, toSubmit, minComplete, IORING_ENTER_GETEVENTS)
            : IoUringSyscalls.Wait(_fd, toSubmit, minComplete, timeoutNanoseconds);
        return result < 0 ? -Errno.Last : 0;
    }

    /// <summary>Unmaps the ring and closes its descriptor; only once nothing is in flight.</summary>
    internal void Dispose()
    {
        Libc.MUnmap(_sqes, _sqesSize);
        if (_cqRing != _sqRing)
        {
            Libc.MUnmap(_cqRing, _cqRingSize);
        }
        Libc.MUnmap(_sqRing, _sqRingSize);
        Libc.Close(_fd);
    }

    /// <summary>Whether a completion is waiting in the CQ ring.</summary>
    internal bool HasCompletion => Volatile.Read(ref *_cqTail) != *_cqHead;

    /// <summary>Takes the oldest completion, if any.</summary>
    internal bool TryTakeCompletion(out ulong userData, out int result)
    {
        uint head = *_cqHead;
        // Acquire: the CQE's contents are written before the kernel publishes the tail that covers it.
        if (head == Volatile.Read(ref *_cqTail))
        {
            userData = 0;
            result = 0;
            return false;
        }
        IoUringCqe* cqe = &_cqes[head & _cqMask];
        userData = cqe->UserData;
        result = cqe->Result;
        // Release: we have read the CQE before the kernel may reuse its slot.
        Volatile.Write(ref *_cqHead, head + 1);
        return true;
    }
}
