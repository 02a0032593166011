namespace Spindle.Tool.Cli;

/// <summary>
/// A command's arguments after parsing: <c>--name value</c> options, <c>--flag</c> switches and
/// positional arguments. Hand-written on purpose: three commands with a handful of options each.
/// </summary>
public sealed class Arguments
{
    private readonly Dictionary<string, string?> _options = new(StringComparer.Ordinal); // name -> value (null for a switch)

    private Arguments(List<string> positional) => Positional = positional;

    /// <summary>The arguments that are not options, in order.</summary>
    public IReadOnlyList<string> Positional { get; }

    /// <summary>True when <c>--help</c> or <c>-h</c> was given.</summary>
    public bool Help => Has("--help");

    /// <summary>
    /// Parses <paramref name="args"/>; <paramref name="valued"/> names the options that take a value,
    /// <paramref name="switches"/> those that do not (<c>--help</c> is always known).
    /// </summary>
    /// <exception cref="UsageException">An unknown option, or an option without its value.</exception>
    public static Arguments Parse(IReadOnlyList<string> args, IReadOnlyCollection<string> valued, IReadOnlyCollection<string> switches)
    {
        var positional = new List<string>();
        var line = new Arguments(positional);
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            if (arg is "-h" or "--help")
            {
                line._options["--help"] = null;
            }
            else if (arg.StartsWith("--", StringComparison.Ordinal) && arg.Length > 2)
            {
                string name = arg, inline = "";
                bool hasInline = false;
                int eq = arg.IndexOf('=', StringComparison.Ordinal);
                if (eq > 0)
                {
                    (name, inline, hasInline) = (arg[..eq], arg[(eq + 1)..], true);
                }
                if (valued.Contains(name))
                {
                    if (!hasInline && i + 1 >= args.Count)
                    {
                        throw new UsageException($"option {name} needs a value");
                    }
                    line._options[name] = hasInline ? inline : args[++i];
                }
                else if (switches.Contains(name) && !hasInline)
                {
                    line._options[name] = null;
                }
                else
                {
                    throw new UsageException($"unknown option: {arg}");
                }
            }
            else if (arg.StartsWith('-') && arg.Length > 1)
            {
                throw new UsageException($"unknown option: {arg}");
            }
            else
            {
                positional.Add(arg);
            }
        }
        return line;
    }

    /// <summary>True when the option or switch was given.</summary>
    public bool Has(string name) => _options.ContainsKey(name);

    /// <summary>The value of an option, or <paramref name="fallback"/> when it was not given.</summary>
    public string Value(string name, string fallback) => _options.TryGetValue(name, out string? value) && value is not null ? value : fallback;

    /// <summary>The value of an option, or null.</summary>
    public string? Value(string name) => _options.TryGetValue(name, out string? value) ? value : null;

    /// <summary>A positive whole number option.</summary>
    /// <exception cref="UsageException">The value is not a positive whole number.</exception>
    public int Int(string name, int fallback)
    {
        string? text = Value(name);
        if (text is null)
        {
            return fallback;
        }
        return int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int value) && value > 0
            ? value
            : throw new UsageException($"option {name} needs a positive whole number, not '{text}'");
    }

    /// <summary>A size option (4096, 64k, 30MB, 1g).</summary>
    /// <exception cref="UsageException">The value is not a size.</exception>
    public long Size(string name, long fallback)
    {
        string? text = Value(name);
        if (text is null)
        {
            return fallback;
        }
        try
        {
            return Spindle.Workloads.Units.ParseBytes(text);
        }
        catch (Exception e) when (e is FormatException or OverflowException)
        {
            throw new UsageException($"option {name}: {e.Message}");
        }
    }
}
