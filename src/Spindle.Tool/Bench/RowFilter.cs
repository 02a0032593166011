using System.Text.RegularExpressions;

namespace Spindle.Tool.Bench;

/// <summary>
/// <c>--filter</c>: a case-insensitive substring of the row name, or a glob with <c>*</c> and <c>?</c>
/// matched against the whole name. Several patterns separated by | match any of them (row names contain commas).
/// </summary>
public sealed class RowFilter
{
    private readonly Func<string, bool>[] _matchers;

    /// <summary>Builds the filter; null or empty matches every row.</summary>
    public RowFilter(string? pattern)
    {
        _matchers = (pattern ?? "").Split('|', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(Matcher).ToArray();
    }

    /// <summary>True when the row runs.</summary>
    public bool Matches(string name) => _matchers.Length == 0 || _matchers.Any(m => m(name));

    private static Func<string, bool> Matcher(string pattern)
    {
        if (pattern.IndexOfAny(['*', '?']) < 0)
        {
            return name => name.Contains(pattern, StringComparison.OrdinalIgnoreCase);
        }
        var regex = new Regex("^" + Regex.Escape(pattern).Replace("\\*", ".*", StringComparison.Ordinal).Replace("\\?", ".", StringComparison.Ordinal) + "$",
            RegexOptions.IgnoreCase | RegexOptions.CultureInvariant);
        return regex.IsMatch;
    }
}
