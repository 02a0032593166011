using Spindle.Diagnostics;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// One blocking system call on a pool thread (or a thread of Spindle's own): the work item and the task source are the
/// same pooled object, so a steady stream of operations allocates nothing.
/// </summary>
internal sealed class ThreadPoolOperation : TransferTaskSource, IThreadPoolWorkItem
{
    private FileRequest _request;                              // what to run; default while pooled
    private int _claimed;                                      // 1 once a thread runs the call: the pool's, or one waiting for the result
    private int _releases;                                     // 2 while a waiter ran the call and the pool's queue still holds this object
    private IoEngine _routedBy;                                // the engine whose router sent it here: the metrics' engine

    /// <summary>Whether a thread that asks for the result before the call started may run it itself (a plain pool work item).</summary>
    internal bool WaiterMayRun { get; set; }

    /// <summary>The descriptor-and-direction key under which <see cref="ReadinessWaiter"/> released this operation, or -1.</summary>
    internal long ReadinessKey { get; set; } = -1;

    /// <summary>Whether the operation counts in <see cref="FileRequestsInFlight"/> (a file or block device on a pool thread).</summary>
    internal bool CountedInFlight { get; set; }

    /// <summary>Takes <paramref name="request"/>, which the router of <paramref name="routedBy"/> sent here.</summary>
    internal void Prepare(in FileRequest request, IoEngine routedBy)
    {
        _request = request;
        _routedBy = routedBy;
        _claimed = 0;
        _releases = 0;
        WaiterMayRun = false;
    }

    /// <summary>
    /// Sync-over-async: a waiter runs a call no pool thread has started, rather than wait for a pool whose threads may
    /// all be waiters like it; the queue's entry then only lets the object go back to its pool.
    /// </summary>
    private protected override void WaitForCompletion(short token)
    {
        if (WaiterMayRun)
        {
            Volatile.Write(ref _releases, 2); // before the claim: the queue's entry, once it sees the claim, counts one down
            if (Interlocked.CompareExchange(ref _claimed, 1, 0) == 0)
            {
                RunCall();
                return;
            }
            Volatile.Write(ref _releases, 0);
        }
        WaitUntilCompleted(token);
    }

    public void Execute()
    {
        if (WaiterMayRun && Interlocked.Exchange(ref _claimed, 1) != 0)
        {
            Release(); // a waiter ran the call (WaitForCompletion)
            return;
        }
        RunCall();
    }

    private void RunCall()
    {
        // Like System.IO: a token cancelled while the item waited in the queue wins over the call.
        CancellationToken cancellationToken = _request.CancellationToken;
        Exception? error = cancellationToken.IsCancellationRequested ? new OperationCanceledException(cancellationToken) : null;
        long result = 0;
        if (error is null)
        {
            try
            {
                result = InlineExecutor.Call(_request, _routedBy, RanOn);
            }
            catch (Exception e)
            {
                error = e;
            }
        }

        long readinessKey = ReadinessKey;
        if (readinessKey >= 0)
        {
            ReadinessKey = -1;
            ReadinessWaiter.Instance.Done(readinessKey);
        }

        if (CountedInFlight)
        {
            CountedInFlight = false;
            FileRequestsInFlight.Leave();
        }

        // Forget every reference before completing: the awaiter may reuse this object at once.
        _request = default;
        Complete(result, error); // continuations run inline on the pool thread, as System.IO's do
    }

    private protected override void Recycle() => Release();

    // Back to the pool once the result was taken and, when a waiter ran the call, the queue's entry has run too.
    private void Release()
    {
        if (Volatile.Read(ref _releases) == 0 || Interlocked.Decrement(ref _releases) == 0)
        {
            ThreadPoolEngine.Instance.Return(this);
        }
    }

    // Pool threads, or Spindle's threads for calls that may wait for ever.
    private static IoMechanism RanOn => Thread.CurrentThread.IsThreadPoolThread ? IoMechanism.Pool : IoMechanism.Blocking;
}
