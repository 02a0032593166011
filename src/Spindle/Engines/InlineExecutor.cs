using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Syscalls;

namespace Spindle.Engines;

/// <summary>
/// The system call a request stands for, made on the calling thread: every engine's <see cref="Mechanism.Inline"/> and
/// <see cref="Mechanism.FastPath"/> executor, and the call pool threads and Spindle's own threads make (<see cref="Call"/>).
/// </summary>
internal static class InlineExecutor
{
    /// <summary>Runs <paramref name="request"/> now (inline, or a write's copy into the page cache); its error comes back in the task.</summary>
    internal static RequestTask Run(in FileRequest request, IoEngine routedBy, IoMechanism ranOn)
    {
        try
        {
            long result = Call(request, routedBy, ranOn);
            if (ranOn == IoMechanism.FastPath)
            {
                SpindleMetrics.InlineWrite(); // writes done inline, not ones that failed
            }
            return RequestTask.Completed(result);
        }
        catch (Exception e)
        {
            return RequestTask.Failed(e);
        }
    }

    /// <summary>
    /// The request's system call on this thread, its error thrown, metered under <paramref name="routedBy"/> and
    /// <paramref name="ranOn"/>. A read's result counts the bytes the page cache served before it; a write's is 0.
    /// </summary>
    internal static long Call(in FileRequest request, IoEngine routedBy, IoMechanism ranOn)
    {
        SafeFileHandle handle = request.Handle;
        switch (request.Kind)
        {
            case RequestKind.Read:
                return request.Prefix + HandleIo.Read(handle, request.Destination.Span, request.Offset, routedBy, ranOn);
            case RequestKind.Write:
                HandleIo.Write(handle, request.Source.Span, request.Offset, routedBy, ranOn);
                return 0;
            case RequestKind.ReadScatter:
                return HandleIo.ReadScatter(handle, request.Destinations!, request.Offset, routedBy, ranOn);
            case RequestKind.WriteGather:
                HandleIo.WriteGather(handle, request.Sources!, request.Offset, routedBy, ranOn);
                return 0;
            case RequestKind.WriteDurable:
                DurableIo.WriteDurable(handle, request.Source.Span, request.Offset, ranOn);
                return 0;
            case RequestKind.DataSync:
                DurableIo.FlushData(handle);
                return 0;
            default:
                HandleIo.FlushToDisk(handle);
                if (ranOn != IoMechanism.Inline)
                {
                    SpindleMetrics.Operation(routedBy, IoDirection.Write, 0, ranOn);
                }
                return 0;
        }
    }
}
