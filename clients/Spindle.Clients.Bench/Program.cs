using System.Globalization;
using Spindle;
using Spindle.Clients.Bench;

// Each client's own workloads on Spindle against its Linux default, interleaved round by round.
// Usage: [--quick] [--rounds N] [--dir DIR] [--out DIR] [--filter TEXT]
var settings = BenchSettings.Parse(args);
if (settings is null)
{
    Console.Error.WriteLine("usage: Spindle.Clients.Bench [--quick] [--rounds N] [--dir DIR] [--out DIR] [--filter TEXT]");
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
            string directory = Path.Combine(settings.WorkDirectory, Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(directory);
            try
            {
                Measurement measured = workload.Run(directory, onSpindle);
                if (round >= 0)
                {
                    (onSpindle ? spindle : baseline).Add(measured);
                }
            }
            finally
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }
    var row = RowResult.From(workload, baseline, spindle);
    rows.Add(row);
    Console.WriteLine(row.ToConsole());
}
Report.Write(settings, rows);
Console.WriteLine($"wrote {Path.Combine(settings.OutDirectory, "clients-report.md")} and clients-report.json");
return 0;
