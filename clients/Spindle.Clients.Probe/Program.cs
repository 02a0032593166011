using System.Globalization;
using Spindle.Clients.Probe;

// A child process for the crash tests: it writes through a real engine on Spindle, prints
// "committed N" once N entries (or keys) are durable, and keeps writing until it is killed.
// Usage: fasterlog DIR ENGINE BATCH | fasterlog-direct DIR ENGINE BATCH | zonetree DIR ENGINE BATCH | litedb FILE ENGINE|system
if (args.Length == 3 && args[0] == "litedb")
{
    // One answer a line (newlines inside an answer escaped), for the test to compare.
    var engineOrSystem = args[2] == "system" ? (Spindle.IoEngine?)null : Enum.Parse<Spindle.IoEngine>(args[2], ignoreCase: true);
    foreach (string answer in LiteDbWorkload.Run(args[1], engineOrSystem))
    {
        Console.Out.WriteLine(answer.Replace("\n", "\\n", StringComparison.Ordinal));
    }
    return 0;
}
if (args.Length != 4)
{
    Console.Error.WriteLine("usage: fasterlog|fasterlog-direct|zonetree DIR ENGINE BATCH");
    return 2;
}
string directory = args[1];
var engine = Enum.Parse<Spindle.IoEngine>(args[2], ignoreCase: true);
int batch = int.Parse(args[3], CultureInfo.InvariantCulture);
switch (args[0])
{
    case "fasterlog":
        CrashWriters.FasterLog(directory, engine, batch, directIO: false);
        break;
    case "fasterlog-direct":
        CrashWriters.FasterLog(directory, engine, batch, directIO: true);
        break;
    case "zonetree":
        CrashWriters.ZoneTree(directory, engine, batch);
        break;
    default:
        Console.Error.WriteLine($"unknown workload {args[0]}");
        return 2;
}
return 0;
