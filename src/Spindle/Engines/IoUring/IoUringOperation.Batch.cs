namespace Spindle.Engines.IoUring;

/// <summary>A read that belongs to a batch (<see cref="IoUringBatch"/>): it reports to the batch instead of completing a task of its own.</summary>
internal sealed partial class IoUringOperation
{
    private IoUringBatch? _batch; // the batch this read belongs to, or null
    private int _batchIndex;      // its request's index in the batch

    /// <summary>Makes the prepared read request <paramref name="index"/> of <paramref name="batch"/> (before it is armed).</summary>
    internal void JoinBatch(IoUringBatch batch, int index)
    {
        _batch = batch;
        _batchIndex = index;
    }

    // From Complete (ring thread): the kernel is done and the resources are released. The operation was never handed out
    // as a ValueTask, so nobody calls GetResult: it goes back to the pool here, after its outcome is copied out.
    private void CompleteInBatch()
    {
        IoUringBatch batch = _batch!;
        int index = _batchIndex;
        long result = _result;
        Exception? error = _error;
        _batch = null;
        _error = null;
        _succeeded = false;
        _engine.Return(this);
        batch.MemberCompleted(index, result, error, onRing: true);
    }
}
