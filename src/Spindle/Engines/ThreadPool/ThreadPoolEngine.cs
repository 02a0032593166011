using Spindle.Engines.FastPath;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// What .NET does on Unix: a blocking system call on a pool thread per operation, queued as System.IO's are. Also runs
/// every engine's <see cref="Mechanism.Pool"/> and <see cref="Mechanism.Blocking"/> requests (<see cref="Router"/>):
/// the latter (pipes, sockets, devices: they may wait for ever) wait in <see cref="ReadinessWaiter"/>, then run on
/// <see cref="WorkerThreads.Blocking"/>, never holding a pool thread that another request needs.
/// </summary>
internal sealed class ThreadPoolEngine : FileIoEngine
{
    internal static readonly ThreadPoolEngine Instance = new();

    private readonly OperationPool<ThreadPoolOperation> _pool = new(1024);

    // The operation this thread gave back last: a caller that awaits its reads one after another takes the result and
    // starts the next read on the same thread, so the object goes round without a lock or a cache line from another core.
    [ThreadStatic]
    private static ThreadPoolOperation? t_spare;

    public override IoEngine Kind => IoEngine.ThreadPool;

    /// <summary>Runs <paramref name="request"/>, which the router of <paramref name="routedBy"/> sent here (its metrics carry that engine).</summary>
    internal RequestTask RunOnWorker(in FileRequest request, Mechanism mechanism, IoEngine routedBy)
    {
        ThreadPoolOperation operation = t_spare ?? _pool.TryRent() ?? new ThreadPoolOperation();
        t_spare = null;
        operation.Prepare(request, routedBy);
        short version = operation.Version;
        Queue(operation, request, mechanism);
        return RequestTask.Pending(operation, version);
    }

    /// <summary>Keeps an operation whose result was taken for the next request (any thread), or lets it go when there is no room.</summary>
    internal void Return(ThreadPoolOperation operation)
    {
        if (t_spare is null)
        {
            t_spare = operation;
            return;
        }
        _pool.Return(operation);
    }

    private static void Queue(ThreadPoolOperation operation, in FileRequest request, Mechanism mechanism)
    {
        HandleFacts facts = request.Facts;
        if (mechanism == Mechanism.Blocking)
        {
            // An idle pipe or socket waits in poll(2), not on a thread of its own; O_NONBLOCK ones, empty transfers,
            // flushes and syncs return at once.
            if (!facts.NonBlocking && !facts.FailsAtOnce && request.Length > 0)
            {
                ReadinessWaiter.Instance.Wait(operation, request.Handle, request.IsWrite, request.CancellationToken);
            }
            else
            {
                WorkerThreads.Blocking.Queue(operation);
            }
            return;
        }
        // Counted only where it tells the router something (a file system only pool threads serve well must not make
        // other requests' ring submissions pay): two atomic operations per request, part of a cached read's cost.
        if (!facts.RefusesNonBlockingIo)
        {
            FileRequestsInFlight.Enter();
            operation.CountedInFlight = true;
        }
        // preferLocal as System.IO: from a pool thread that then blocks on the result, the runtime
        // hands the item to the next free thread first (global items would run before it).
        operation.WaiterMayRun = true;
        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
    }
}
