using System.Globalization;
using Spindle;
using Spindle.Clients.Bench;

// Each client's own workloads on Spindle against its Linux default, interleaved round by round.
// Usage: [--quick] [--rounds N] [--dir DIR] [--out DIR] [--filter TEXT] [--side spindle|baseline]
if (args is ["--garnet-server", ..])
{
    return GarnetHost.Run(args); // the child process of the Garnet rows
}
var settings = BenchSettings.Parse(args);
if (settings is null)
{
    Console.Error.WriteLine("usage: Spindle.Clients.Bench [--quick] [--rounds N] [--dir DIR] [--out DIR] [--filter TEXT] [--side spindle|baseline]");
    return 2;
}
Directory.CreateDirectory(settings.WorkDirectory);
Directory.CreateDirectory(settings.OutDirectory);
Console.WriteLine($"clients bench: {(settings.Quick ? "quick" : "full")}, {settings.Rounds} rounds, engine {SpindleRandomAccess.DefaultEngine}, in {settings.WorkDirectory}");
var rows = new List<RowResult>();
foreach (Workload workload in Workloads.All(settings))
{
    if (settings.Filter is string filter && !workload.Name.Contains(filter, StringComparison.OrdinalIgnoreCase))
    {
        continue;
    }
    var baseline = new List<Measurement>();
    var spindle = new List<Measurement>();
    // Round -1 is a warm-up of both sides, not counted: whoever ran first would otherwise pay the JIT
    // and the engines' static initialisation (a single-round run once showed LiteDB queries at 39×).
    for (int round = -1; round < settings.Rounds; round++)
    {
        // Interleaved, alternating who goes first, so drift on a shared machine hits both sides.
        bool spindleFirst = round % 2 != 0;
        for (int side = 0; side < 2; side++)
        {
            bool onSpindle = (side == 0) == spindleFirst;
            if (settings.Side is string only && onSpindle != (only == "spindle"))
            {
                continue;
            }
            string directory = Path.Combine(settings.WorkDirectory, Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(directory);
            try
            {
                Measurement measured = workload.Run(directory, onSpindle);
                if (round >= 0)
                {
                    (onSpindle ? spindle : baseline).Add(measured);
                }
                if (settings.Side is not null)
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{workload.Name} [{settings.Side}] round {round}: {measured.OpsPerSecond:N0} ops/s{(measured.P99Microseconds is double p99 ? $", p99 {p99:N0} us" : "")}"));
                }
            }
            finally
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }
    if (settings.Side is not null)
    {
        continue; // one side only: no ratio to report
    }
    var row = RowResult.From(workload, baseline, spindle);
    rows.Add(row);
    Console.WriteLine(row.ToConsole());
}
if (settings.Side is not null)
{
    return 0;
}
if (settings.Filter is null || "garnet".Contains(settings.Filter, StringComparison.OrdinalIgnoreCase))
{
    GarnetBench.Run(settings); // its own rows: three devices side by side, not Spindle against one baseline
}
if (rows.Count == 0)
{
    return 0;
}
Report.Write(settings, rows);
Console.WriteLine($"wrote {Path.Combine(settings.OutDirectory, "clients-report.md")} and clients-report.json");
return 0;
