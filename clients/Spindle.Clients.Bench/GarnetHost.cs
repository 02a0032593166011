using System.Net;
using Garnet;
using Garnet.server;
using Spindle.Garnet;
using Tsavorite.core;

namespace Spindle.Clients.Bench;

/// <summary>
/// The Garnet server of the Garnet rows, run as a child process of the bench (<c>--garnet-server</c>), so that its
/// CPU time and disk reads are its own in <c>/proc/&lt;pid&gt;</c>. Storage tier on, objects off, every device on
/// the same settings; it prints <c>ready</c>, then takes commands on standard input: <c>minthreads N</c> sizes the
/// thread pool as Garnet's <c>--minthreads</c> does (<see cref="ThreadPool.SetMinThreads"/>), <c>mechanisms</c> prints
/// how Spindle ran the reads since the last ask (<see cref="ReadMechanisms"/>), <c>gc</c> prints the garbage collector's
/// counts since start, <c>pool</c> the work items the thread pool completed since start, <c>quit</c> stops.
/// </summary>
internal static class GarnetHost
{
    /// <summary>The devices the rows compare, by the name the bench passes.</summary>
    public static readonly string[] Devices = ["native", "native-uring", "randomaccess", "spindle", "spindle-uring-reads"];

    public static int Run(string[] args)
    {
        string? device = null, directory = null, memory = null, page = null;
        int port = 0;
        for (int i = 1; i + 1 < args.Length; i += 2)
        {
            switch (args[i])
            {
                case "--device": device = args[i + 1]; break;
                case "--dir": directory = args[i + 1]; break;
                case "--port": port = int.Parse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture); break;
                case "--memory": memory = args[i + 1]; break;
                case "--page": page = args[i + 1]; break;
            }
        }
        if (device is null || directory is null || memory is null || page is null || port == 0)
        {
            Console.Error.WriteLine("usage: --garnet-server --device native|native-uring|randomaccess|spindle|spindle-uring-reads --dir DIR --port PORT --memory SIZE --page SIZE");
            return 2;
        }
        var options = new GarnetServerOptions
        {
            EndPoints = [new IPEndPoint(IPAddress.Loopback, port)],
            EnableStorageTier = true,
            LogDir = directory,
            CheckpointDir = directory,
            LogMemorySize = memory,
            PageSize = page,
            DisableObjects = true,
            QuietMode = true,
        };
        switch (device)
        {
            case "native": options.DeviceType = DeviceType.Native; break; // Garnet's default on Linux (libaio backend)
            case "native-uring": options.DeviceType = DeviceType.Native; options.DeviceIoBackend = NativeStorageDevice.IoBackend.Uring; break;
            case "randomaccess": options.DeviceType = DeviceType.RandomAccess; break;
            case "spindle": options.DeviceFactoryCreator = new SpindleNamedDeviceFactoryCreator(); break;
            case "spindle-uring-reads": options.DeviceFactoryCreator = new SpindleNamedDeviceFactoryCreator(new SpindleStorageDeviceOptions { ReadEngine = IoEngine.IoUring }); break;
            default: Console.Error.WriteLine($"unknown device {device}"); return 2;
        }
        using var reads = new ReadMechanisms();
        using var server = new GarnetServer(options);
        server.Start();
        Console.WriteLine("ready");
        while (Console.ReadLine() is string line)
        {
            string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (words is ["minthreads", string count])
            {
                int threads = int.Parse(count, System.Globalization.CultureInfo.InvariantCulture);
                ThreadPool.SetMinThreads(threads, threads);
                Console.WriteLine("ok");
            }
            else if (words is ["mechanisms"])
            {
                Console.WriteLine(reads.TakeSummary());
            }
            else if (words is ["gc"])
            {
                // Allocations and collections since start; the bench takes the difference around each phase.
                Console.WriteLine(string.Create(System.Globalization.CultureInfo.InvariantCulture,
                    $"{GC.GetTotalAllocatedBytes()} {GC.CollectionCount(0)} {GC.CollectionCount(1)} {GC.CollectionCount(2)} {GC.GetTotalPauseDuration().TotalMilliseconds:F1}"));
            }
            else if (words is ["pool"])
            {
                // Work items the thread pool ran since start: the bench takes the difference around each phase.
                Console.WriteLine(ThreadPool.CompletedWorkItemCount.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
            else if (words is ["native"])
            {
                Console.WriteLine(LoadedNativeDevice() ?? "none");
            }
            else if (words is ["quit"])
            {
                break;
            }
        }
        return 0;
    }

    /// <summary>Which native device library this process mapped, read from <c>/proc/self/maps</c> (the proof of which binary ran).</summary>
    private static string? LoadedNativeDevice()
        => File.ReadLines("/proc/self/maps").Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries)).Where(f => f.Length >= 6 && f[5].Contains("libnative_device", StringComparison.Ordinal)).Select(f => f[5]).FirstOrDefault();
}

/// <summary>
/// Spindle's reads by the mechanism that ran them (<c>ring</c>, <c>pool</c>, <c>inline</c>, …), read from its meter: which
/// of a Spindle device's reads needed a thread-pool thread to run, the cost a pool starved by Garnet's waiting sessions shows.
/// </summary>
internal sealed class ReadMechanisms : IDisposable
{
    private readonly System.Diagnostics.Metrics.MeterListener _listener = new();
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, long> _counts = new();

    public ReadMechanisms()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.operations")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string? mechanism = null;
            bool read = false;
            foreach (var tag in tags)
            {
                read |= tag.Key == "disk.io.direction" && (string?)tag.Value == "read";
                mechanism = tag.Key == "spindle.io.mechanism" ? (string?)tag.Value : mechanism;
            }
            if (read && mechanism is not null)
            {
                _counts.AddOrUpdate(mechanism, static (_, added) => added, static (_, total, added) => total + added, value); // no closure per read
            }
        });
        _listener.Start();
    }

    /// <summary>"ring=N pool=M …" since the last call ("none" when Spindle read nothing), and starts counting afresh.</summary>
    public string TakeSummary()
    {
        var taken = new List<string>();
        foreach (string mechanism in _counts.Keys.Order())
        {
            if (_counts.TryRemove(mechanism, out long count))
            {
                taken.Add($"{mechanism}={count}");
            }
        }
        return taken.Count == 0 ? "none" : string.Join(' ', taken);
    }

    public void Dispose() => _listener.Dispose();
}
