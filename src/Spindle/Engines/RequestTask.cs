namespace Spindle.Engines;

/// <summary>
/// What an executor gives back for a request before the public entry gives it its type: the result or error at once,
/// or the pooled <see cref="TransferTaskSource"/> that completes later, which serves every transfer's task type alike.
/// </summary>
internal readonly struct RequestTask(TransferTaskSource? operation, short version, long result, Exception? error)
{
    internal static RequestTask Completed(long result) => new(null, 0, result, null);

    internal static RequestTask Failed(Exception error) => new(null, 0, 0, error);

    /// <summary>An operation that completes later; <paramref name="version"/> was read before it was started.</summary>
    internal static RequestTask Pending(TransferTaskSource operation, short version) => new(operation, version, 0, null);

    /// <summary>As a read's task: the bytes read.</summary>
    internal ValueTask<int> AsRead()
        => operation is not null ? new ValueTask<int>(operation, version)
            : error is null ? new ValueTask<int>((int)result)
            : ValueTask.FromException<int>(error);

    /// <summary>As a scatter read's task: the bytes read.</summary>
    internal ValueTask<long> AsScatterRead()
        => operation is not null ? new ValueTask<long>(operation, version)
            : error is null ? new ValueTask<long>(result)
            : ValueTask.FromException<long>(error);

    /// <summary>As the task of a write, a flush or a sync: done, or its error.</summary>
    internal ValueTask AsWrite()
        => operation is not null ? new ValueTask(operation, version)
            : error is null ? default
            : ValueTask.FromException(error);
}
