using System.Text.RegularExpressions;
using Xunit;

namespace Spindle.Tests.Engines;

/// <summary>
/// The decision table in docs/engine-v2.md and the io_uring table in Router.cs's summary say the same: every row
/// number with the same mechanisms, no row in one that the other lacks. The code's table is the one a reader of
/// Router.cs sees beside the rules; the docs' carries the measurements.
/// </summary>
public class RouterDocsTests
{
    [Fact]
    public void The_docs_decision_table_names_the_rows_and_mechanisms_of_the_routers_table()
    {
        string root = RepoRoot();
        SortedSet<string> code = CodeRows(File.ReadAllText(Path.Combine(root, "src", "Spindle", "Engines", "Router.cs")));
        SortedSet<string> docs = DocsRows(File.ReadAllText(Path.Combine(root, "docs", "engine-v2.md")));
        Assert.True(code.Count >= 20, "the router's table was not found: " + string.Join(", ", code));
        Assert.Equal(code, docs);
    }

    [Fact]
    public void A_row_missing_from_the_docs_is_found()
    {
        string root = RepoRoot();
        SortedSet<string> code = CodeRows(File.ReadAllText(Path.Combine(root, "src", "Spindle", "Engines", "Router.cs")));
        string docs = File.ReadAllText(Path.Combine(root, "docs", "engine-v2.md"));
        string withoutRow5 = string.Join('\n', docs.Split('\n').Where(l => !l.StartsWith("| 5 |", StringComparison.Ordinal)));
        Assert.NotEqual(code, DocsRows(withoutRow5));
    }

    // "///  9   Pool       read, …" lines of the io_uring table (up to the thread pool's table): "9 Pool".
    private static SortedSet<string> CodeRows(string source)
    {
        int start = source.IndexOf("/// io_uring (", StringComparison.Ordinal);
        int end = source.IndexOf("/// thread pool (", start, StringComparison.Ordinal);
        var rows = new SortedSet<string>(StringComparer.Ordinal);
        foreach (Match m in Regex.Matches(source[start..end], @"^///\s+(\d+)\s+([A-Za-z]+)\s", RegexOptions.Multiline))
        {
            rows.Add(m.Groups[1].Value + " " + m.Groups[2].Value);
        }
        return rows;
    }

    // "| 9 | request | handle | runs | reason |" rows of "## The decision table": the runs column's first words name the mechanism.
    private static SortedSet<string> DocsRows(string docs)
    {
        int start = docs.IndexOf("## The decision table", StringComparison.Ordinal);
        int end = docs.IndexOf("\n## ", start + 1, StringComparison.Ordinal);
        var rows = new SortedSet<string>(StringComparer.Ordinal);
        foreach (string line in docs[start..end].Split('\n'))
        {
            string[] cells = line.Split('|');
            if (cells.Length < 6 || !int.TryParse(cells[1].Trim(), out int row))
            {
                continue;
            }
            rows.Add(row + " " + Mechanism(cells[4].Trim()));
        }
        return rows;
    }

    private static string Mechanism(string runs) => runs switch
    {
        _ when runs.StartsWith("inline", StringComparison.Ordinal) => "Inline",
        _ when runs.StartsWith("pool thread", StringComparison.Ordinal) => "Pool",
        _ when runs.StartsWith("own thread", StringComparison.Ordinal) => "Blocking",
        _ when runs.StartsWith("done", StringComparison.Ordinal) => "Done",
        _ when runs.StartsWith("page-cache fast path", StringComparison.Ordinal) => "FastPath",
        _ when runs.StartsWith("a ring the batch has to itself", StringComparison.Ordinal) => "OwnRing",
        _ when runs.StartsWith("ring", StringComparison.Ordinal) => "Ring",
        _ when runs.StartsWith("per request", StringComparison.Ordinal) => "Ring", // a batch: its ring share goes in together
        _ => "unknown: " + runs,
    };

    private static string RepoRoot()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Spindle.slnx")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException("Spindle.slnx not found above " + AppContext.BaseDirectory);
    }
}
