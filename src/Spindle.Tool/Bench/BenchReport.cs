using Spindle.Tool.Reports;

namespace Spindle.Tool.Bench;

/// <summary>A finished <c>spindle bench</c> run: when, where, how, and every row's figures.</summary>
public sealed class BenchReport
{
    /// <summary>When the run started (UTC).</summary>
    public required DateTimeOffset Date { get; init; }

    /// <summary>The machine.</summary>
    public required MachineInfo Machine { get; init; }

    /// <summary>True for <c>--quick</c>.</summary>
    public required bool Quick { get; init; }

    /// <summary>The harness settings used.</summary>
    public required HarnessSettings Settings { get; init; }

    /// <summary>The directory of the files.</summary>
    public required string Directory { get; init; }

    /// <summary>The fio version, or null when fio is not installed.</summary>
    public string? FioVersion { get; init; }

    /// <summary>
    /// What a reader needs to know about missing figures and how to get them (fio or perf not installed), and how the run
    /// was loaded (<c>--busy</c>); printed before the tables and at the top of the reports.
    /// </summary>
    public IReadOnlyList<string> Notes { get; init; } = [];

    /// <summary>Which engines ran: Spindle's default and whether io_uring was really available (else the IoUring column ran on the fallback).</summary>
    public string Engines { get; init; } = EngineDescription();

    /// <summary>Every row, in matrix order.</summary>
    public required IReadOnlyList<RowResult> Rows { get; init; }

    /// <summary>The dispatch matrix's cells, or null when none was selected.</summary>
    public DispatchMatrixResult? Dispatch { get; set; }

    /// <summary>How long the run took.</summary>
    public TimeSpan Elapsed { get; set; }

    /// <summary>One line about the engines of this process.</summary>
    public static string EngineDescription() => SpindleRandomAccess.IsIoUringAvailable
        ? $"io_uring available; Auto resolves to {SpindleRandomAccess.DefaultEngine}"
        : $"io_uring NOT available here (the IoUring column ran on the fallback); Auto resolves to {SpindleRandomAccess.DefaultEngine}";
}
