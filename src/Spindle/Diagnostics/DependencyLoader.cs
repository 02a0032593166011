using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Spindle.Diagnostics;

/// <summary>
/// Loads every assembly Spindle references as soon as Spindle's code first runs. Loading an assembly
/// opens its file, and the runtime remembers a failed load for the life of the process: were the
/// process out of descriptors when Spindle first reached, say, its metrics or an engine, that code
/// would fail forever after. Loading them all up front, while a descriptor is free, keeps later
/// exhaustion to what it is for System.IO: an EMFILE on the calls that open something.
/// </summary>
internal static partial class DependencyLoader
{
    private const int EFD_CLOEXEC = 0x80000;

    private const int Pending = 0, Done = 1, Failed = 2;

    private static int s_state; // Pending until a load with descriptors free ends: Done, or Failed (not retried)

    /// <summary>
    /// Whether the load was attempted with descriptors free: everything is loaded, or what failed then
    /// would fail anyway. Until then, code that needs more than the core library must not run.
    /// </summary>
    internal static bool Settled => Volatile.Read(ref s_state) != Pending;

#pragma warning disable CA2255 // a library's module initializer, on purpose: it must run before any other Spindle code
    [ModuleInitializer]
#pragma warning restore CA2255
    internal static void OnModuleLoad() => TrySettle();

    /// <summary>
    /// Loads what Spindle references when enough descriptors are free, then creates what needs more
    /// than those (the meter), and returns <see cref="Settled"/>. Short of descriptors it loads nothing
    /// (a failed load would be remembered), so that a later call can.
    /// </summary>
    internal static bool TrySettle()
    {
        if (Settled)
        {
            return true;
        }
        // The runtime keeps a loaded assembly's file open, and needs one more while it loads it.
        if (!DescriptorsFree(ReferencedAssemblyCount + 2))
        {
            return false;
        }
        int state = Done;
        try
        {
            GC.KeepAlive(OneTypePerReferencedAssembly());
        }
        catch (Exception e) when (e is IOException or BadImageFormatException or TypeLoadException)
        {
            // Another thread took the descriptors meanwhile: what loaded stays loaded, the rest would fail
            // again, and the code that needs it fails where it runs.
            state = Failed;
        }
        Volatile.Write(ref s_state, state);
        SpindleMetrics.CreateInstruments();
        return true;
    }

    // The length of OneTypePerReferencedAssembly, known without running it (that would load them).
    internal const int ReferencedAssemblyCount = 12;

    /// <summary>
    /// One type of each assembly Spindle references (a test checks that none is missing). Naming them loads
    /// those assemblies when the runtime compiles this method; compiled ahead of time (Native AOT) there is
    /// nothing to load, everything is in the binary, and naming a type costs nothing. No reflection: the
    /// list of references is not readable under Native AOT, and trimming may remove them.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static Type[] OneTypePerReferencedAssembly() =>
    [
        typeof(object),                                                   // System.Runtime
        typeof(List<>),                                                   // System.Collections
        typeof(System.Buffers.MemoryPool<>),                              // System.Memory
        typeof(System.Collections.Concurrent.ConcurrentQueue<>),          // System.Collections.Concurrent
        typeof(SemaphoreSlim),                                            // System.Threading
        typeof(NativeMemory),                                             // System.Runtime.InteropServices
        typeof(IThreadPoolWorkItem),                                      // System.Threading.ThreadPool
        typeof(Thread),                                                   // System.Threading.Thread
        typeof(System.Diagnostics.Tracing.EventSource),                   // System.Diagnostics.Tracing
        typeof(System.Diagnostics.Metrics.Meter),                         // System.Diagnostics.DiagnosticSource
        typeof(Console),                                                  // System.Console
        typeof(System.Text.UTF8Encoding),                                 // System.Text.Encoding.Extensions
    ];

    // Counts by making them: an eventfd is the cheapest descriptor and needs no path. These calls
    // marshal nothing, so their stubs need no assembly but the core library.
    private static unsafe bool DescriptorsFree(int count)
    {
        int* taken = stackalloc int[count];
        int made = 0;
        while (made < count && (taken[made] = EventFd(0, EFD_CLOEXEC)) >= 0)
        {
            made++;
        }
        for (int i = 0; i < made; i++)
        {
            CloseDescriptor(taken[i]);
        }
        return made == count;
    }

    [LibraryImport("libc", EntryPoint = "eventfd")]
    private static partial int EventFd(uint initial, int flags);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int CloseDescriptor(int fd);
}
