using System.Globalization;
using System.Xml.Linq;
using Spindle.Tool.Bench;
using Spindle.Tool.Reports;
using Spindle.Tool.Tune;
using Spindle.Workloads;

namespace Spindle.Tests.Tool;

/// <summary>What the reports say, from figures made up for the purpose (no measurement, so nothing here depends on the machine).</summary>
public class ReportTests
{
    private static ContenderResult Result(Contender contender, double ns, double p99 = double.NaN) =>
        new(contender, ns, ns, ns, 0, 3, 1) { CpuNsPerOperation = ns / 2, P50Ns = double.IsNaN(p99) ? double.NaN : ns, P99Ns = p99 };

    private static RowResult Row(string name, string group, int inFlight, FioResult? fio, params ContenderResult[] results) => new()
    {
        Name = name,
        Group = group,
        IsAsync = true,
        OperationsPerInvocation = 1,
        InFlight = inFlight,
        RecordsLatency = results.Any(r => double.IsFinite(r.P99Ns)),
        Results = results,
        Fio = fio,
    };

    [Fact]
    public void The_headline_ratio_is_Spindle_Auto_even_when_another_engine_is_faster()
    {
        // Sync is twice as fast as System.IO, but Auto, what users get, is 20 % slower: the report says 1.20.
        RowResult row = Row("RandomRead4K.Direct(QD 1, 1 GiB)", "Beyond", 1, new FioResult("fio …", 1e9 / 110, 4096e9 / 110),
            Result(Contender.SystemIO, 100, 150), Result(Contender.SpindleAuto, 120, 140), Result(Contender.SpindleSync, 50, 60),
            Result(Contender.SpindleThreadPool, 90, 95), Result(Contender.SpindleIoUring, 120, 140));

        Assert.Equal(1.2, row.Ratio, 9);
        string table = BenchTable.Build([row]).ToConsole();
        Assert.Contains("Auto / System.IO", table);
        Assert.Matches(@"RandomRead4K\.Direct\(QD 1, 1 GiB\)\s+100\.0 ns\s+120\.0 ns\s+1\.20\s+50\.0 ns", table);

        IReadOnlyList<TargetCheck> checks = SpecTargets.Evaluate(row);
        Assert.Equal((false, "1.20"), checks.Where(c => c.Target == "Auto time ≤ 1.00 × System.IO").Select(c => (c.Met, c.Detail)).Single());
        // 120 ns against fio's 110 ns: 1.09× fio's latency at QD 1, over the 1.05 target.
        Assert.Equal((false, "1.09× fio's"), checks.Where(c => c.Target == "Auto latency ≤ 1.05× fio's at QD 1").Select(c => (c.Met, c.Detail)).Single());
        Assert.Equal(true, checks.Single(c => c.Target == "Auto p99 latency ≤ System.IO's").Met);
    }

    [Fact]
    public void Cpu_and_latency_table_has_a_line_per_contender_and_fio()
    {
        var fio = new FioResult("fio …", 100_000, 409_600_000) { CpuNsPerOperation = 5_000, P50Ns = 9_000, P99Ns = 20_000 };
        RowResult row = Row("RandomRead4K.Direct(QD 32, 1 GiB)", "Beyond", 32, fio,
            Result(Contender.SystemIO, 25_000, 230_000), Result(Contender.SpindleAuto, 12_000, 900_000));
        string[] lines = BenchTable.CpuAndLatency([row]).ToConsole().Split('\n', StringSplitOptions.RemoveEmptyEntries);

        Assert.Equal(5, lines.Length);   // header, rule, System.IO, Spindle Auto, fio
        Assert.Matches(@"^RandomRead4K\.Direct\(QD 32, 1 GiB\)\s+System\.IO\s+25\.00 µs\s+40,000\s+12\.50 µs\s+25\.00 µs\s+230\.00 µs$", lines[2]);
        Assert.Matches(@"^\s+Spindle Auto\s+12\.00 µs\s+83,333\s+6\.00 µs\s+12\.00 µs\s+900\.00 µs$", lines[3]);
        Assert.Matches(@"^\s+fio\s+10\.00 µs\s+100,000\s+5\.00 µs\s+9\.00 µs\s+20\.00 µs$", lines[4]);

        IReadOnlyList<TargetCheck> checks = SpecTargets.Evaluate(row);
        Assert.Equal(false, checks.Single(c => c.Target == "Auto p99 latency ≤ System.IO's").Met);
        Assert.Equal((true, "6.00 µs vs 5.00 µs (1.20×)"), checks.Where(c => c.Target == "Auto CPU per operation ≤ 1.5× fio's").Select(c => (c.Met, c.Detail)).Single());
        Assert.Equal((false, "83 %"), checks.Where(c => c.Target == "Auto ≥ 95 % of fio io_uring IOPS at QD 32").Select(c => (c.Met, c.Detail)).Single());
    }

    [Fact]
    public void Sweep_chart_draws_three_lines_over_every_depth()
    {
        RowResult[] rows = Matrix.SweepDepths.Select(depth => Row($"Sweep.RandomRead4K.Direct(QD {depth}, 1 GiB)", "Sweep", depth,
            new FioResult("fio …", 10_000 * depth, 0),
            Result(Contender.SystemIO, 1e9 / (5_000.0 * depth)), Result(Contender.SpindleAuto, 1e9 / (9_000.0 * depth)))).Reverse().ToArray();

        XDocument chart = SweepChart.Build(rows, "sweep")!;
        XElement[] lines = chart.Descendants().Where(e => e.Name.LocalName == "polyline").ToArray();
        Assert.Equal(3, lines.Length);
        Assert.All(lines, l => Assert.Equal(8, l.Attribute("points")!.Value.Split(' ').Length));
        string[] texts = chart.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value).ToArray();
        Assert.Contains("System.IO", texts);
        Assert.Contains("Spindle Auto", texts);
        Assert.Contains("fio io_uring", texts);
        // The depths are the x axis, in order, whatever the order of the rows.
        Assert.Equal(Matrix.SweepDepths.Select(d => d.ToString(CultureInfo.InvariantCulture)), texts.Where(t => Matrix.SweepDepths.Select(d => d.ToString(CultureInfo.InvariantCulture)).Contains(t)));
        // fio's highest point (1.28 M ops/s) is the top of the plot, within the axis.
        double[] fioY = lines[2].Attribute("points")!.Value.Split(' ').Select(p => double.Parse(p.Split(',')[1], CultureInfo.InvariantCulture)).ToArray();
        Assert.True(fioY.Min() >= 60 && fioY.Max() <= 340);

        string table = BenchTable.Sweep(rows).ToConsole();
        Assert.Matches(@"\n\s+1\s+5,000\s+9,000\s+10,000\s+0\.56\s+90 %", table);
        Assert.Matches(@"\n\s+128\s+640,000\s+1,152,000\s+1,280,000\s+0\.56\s+90 %", table);
        Assert.Null(SweepChart.Build([], "none"));
    }

    [Fact]
    public void Ratio_chart_keeps_values_clear_of_the_reference_lines_and_uses_its_width()
    {
        RowResult[] rows =
        [
            Row("a", "RandomAccess", 0, null, Result(Contender.SystemIO, 100), Result(Contender.SpindleAuto, 130)),
            Row("b", "RandomAccess", 0, null, Result(Contender.SystemIO, 100), Result(Contender.SpindleAuto, 45)),
            Row("c", "Beyond", 0, null, Result(Contender.SystemIO, 100), Result(Contender.SpindleAuto, 95)),
        ];
        XDocument chart = RatioChart.Build(rows, "ratios", "io_uring available; Auto resolves to IoUring");
        XElement[] bars = chart.Descendants().Where(e => e.Name.LocalName == "rect" && e.Attribute("fill")?.Value is "#3a9d5d" or "#d0534a").ToArray();
        Assert.Equal(["#d0534a", "#3a9d5d", "#3a9d5d"], bars.Select(b => b.Attribute("fill")!.Value));
        double[] lineX = chart.Descendants().Where(e => e.Name.LocalName == "line").Select(e => X(e, "x1")).ToArray();
        Assert.Equal(2, lineX.Length);
        XElement[] values = chart.Descendants().Where(e => e.Name.LocalName == "text" && e.Value is "1.30" or "0.45" or "0.95").ToArray();
        Assert.Equal(3, values.Length);
        // Values are right-aligned in their own column: each ends right of every bar and line, with room for its width.
        double barsEnd = bars.Max(b => X(b, "x") + X(b, "width"));
        Assert.All(values, v => Assert.True(X(v, "x") - 30 > Math.Max(barsEnd, lineX.Max())));
        // The longest bar (1.30) spans most of the bar area: no empty half of the canvas.
        double start = X(bars[0], "x");
        Assert.True(X(bars[0], "width") > 0.9 * (values.Min(v => X(v, "x")) - 48 - start));
        string legend = string.Join(' ', chart.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value));
        Assert.Contains("Spindle Auto", legend);
        Assert.Contains("Auto resolves to IoUring", legend);
        Assert.DoesNotContain("SPEC", legend);
    }

    [Fact]
    public void Heat_map_cells_show_the_time_in_one_format_and_the_fastest_option()
    {
        var grid = new TuneGrid([4096, 8192], [4096, 8192], 1 << 20, 1, TimeSpan.FromSeconds(1));
        var results = new List<TuneMeasurement>();
        foreach (Direction direction in new[] { Direction.Write, Direction.Read })
        {
            foreach (int buffer in grid.Buffers)
            {
                foreach (int block in grid.Blocks)
                {
                    for (int o = 0; o < TuneOption.All.Count; o++)
                    {
                        // WriteThrough is the fastest in every cell; times from 12 ms up (writes) and from 0.3 ms up (reads).
                        double ms = (direction == Direction.Write ? 12 : 0.3) * buffer / 4096.0 * (o == 2 ? 0.5 : 1 + o);
                        results.Add(new TuneMeasurement(direction, buffer, block, 1, TuneOption.All[o], TimeSpan.FromMilliseconds(ms), Extrapolated: false));
                    }
                }
            }
        }
        XDocument map = HeatMap.Build(results, grid, "tune");
        string[] texts = map.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value).ToArray();
        Assert.Equal(8, texts.Count(t => t == "WriteThr"));
        string[] times = texts.Where(t => t.Length > 0 && char.IsDigit(t[0]) && !t.Contains("KiB", StringComparison.Ordinal)).ToArray();
        Assert.Equal(8, times.Length);
        Assert.All(times, t => Assert.Matches(@"^[\d,]+\.\d$", t));
        // Writes in milliseconds (6.0 is the fastest), reads in microseconds (150.0) since every read cell is under 1 ms.
        Assert.Contains("6.0", times);
        Assert.Contains("150.0", times);
        Assert.Contains(texts, t => t.StartsWith("each cell: microseconds", StringComparison.Ordinal));
    }

    private static double X(XElement element, string attribute) => double.Parse(element.Attribute(attribute)!.Value, CultureInfo.InvariantCulture);
}
