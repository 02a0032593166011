using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Xunit.Abstractions;

namespace Spindle.Tests.Package;

/// <summary>
/// The folders of src/Spindle are its layers (docs/engine-v2.md, "Folders and their dependencies"): a folder may
/// use the ones below it, never one that uses it back. These tests compile src/Spindle's sources with Roslyn,
/// resolve every name to the file that declares it (for a member of a partial type, the file of that member),
/// and look for a cycle in the graph of top-level folders (the files directly in src/Spindle are one more node).
/// </summary>
public class FolderDependencyTests(ITestOutputHelper output)
{
    [Fact]
    public void No_two_folders_of_src_Spindle_depend_on_each_other()
    {
        FolderGraph graph = FolderGraph.Of(SourceRoot());
        output.WriteLine(graph.Describe());
        List<List<string>> cycles = graph.Cycles();
        Assert.True(cycles.Count == 0, "Folders of src/Spindle that depend on each other (move the type to the folder it "
            + "belongs to, or invert the dependency):\n" + graph.Explain(cycles));
    }

    /// <summary>
    /// The same inside the engine: its sub-folders (FastPath, IoUring, ThreadPool) are layers too; the files directly in
    /// Engines (the base engine, the router, the selector) are the place where they meet, so they are not a node.
    /// </summary>
    [Fact]
    public void No_two_subfolders_of_the_engine_depend_on_each_other()
    {
        FolderGraph graph = FolderGraph.Of(SourceRoot(), "Engines");
        output.WriteLine(graph.Describe());
        Assert.Contains("IoUring -> ", graph.Describe()); // the graph sees the sub-folders at all
        List<List<string>> cycles = graph.Cycles();
        Assert.True(cycles.Count == 0, "Sub-folders of src/Spindle/Engines that depend on each other:\n" + graph.Explain(cycles));
    }

    [Fact]
    public void A_reference_between_two_engine_subfolders_both_ways_is_found_as_a_cycle()
    {
        string root = SourceRoot();
        string probe = "namespace Spindle.Engines.FastPath;\ninternal static class CycleProbe\n{\n"
            + "    internal static bool IsRing(object value) => value is Spindle.Engines.IoUring.IoUringEngine;\n}\n";
        string back = "namespace Spindle.Engines.IoUring;\ninternal static class CycleProbeBack\n{\n"
            + "    internal static bool IsFacts(object value) => value is Spindle.Engines.FastPath.HandleFacts;\n}\n";
        FolderGraph graph = FolderGraph.Of(root, "Engines", (Path.Combine(root, "Engines", "FastPath", "CycleProbe.cs"), probe),
            (Path.Combine(root, "Engines", "IoUring", "CycleProbeBack.cs"), back));
        List<List<string>> cycles = graph.Cycles();
        output.WriteLine(graph.Explain(cycles));
        Assert.Contains(cycles, cycle => cycle.Contains("FastPath") && cycle.Contains("IoUring"));
    }

    [Fact]
    public void A_reference_from_a_lower_folder_to_a_higher_one_is_found_as_a_cycle()
    {
        string root = SourceRoot();
        // The system-call imports naming the public stream: Streams reach Interop through the system calls.
        string probe = "namespace Spindle.Interop;\ninternal static class CycleProbe\n{\n"
            + "    internal static bool IsStream(object value) => value is SpindleFileStream;\n}\n";
        FolderGraph graph = FolderGraph.Of(root, (Path.Combine(root, "Interop", "CycleProbe.cs"), probe));
        List<List<string>> cycles = graph.Cycles();
        output.WriteLine(graph.Explain(cycles));
        Assert.Contains(cycles, cycle => cycle.Contains("Interop") && cycle.Contains("Streams"));
        Assert.Contains("Interop/CycleProbe.cs -> SpindleFileStream", graph.Explain(cycles));
    }

    private static string SourceRoot()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Spindle.slnx")))
            {
                return Path.Combine(dir.FullName, "src", "Spindle");
            }
        }
        throw new InvalidOperationException("Spindle.slnx not found above " + AppContext.BaseDirectory);
    }

    /// <summary>Which folder uses which, each edge with the references (file -> symbol) that make it.</summary>
    private sealed class FolderGraph
    {
        private const string RootNode = "(root)";

        // from folder -> to folder -> "file -> symbol" references, sorted so that every run reads the same
        private readonly SortedDictionary<string, SortedDictionary<string, SortedSet<string>>> _edges = new(StringComparer.Ordinal);

        private readonly string _root;   // the folder whose sub-folders are the nodes
        private readonly bool _subfolder; // a folder inside src/Spindle: its own files, and everything outside it, are no node

        private FolderGraph(string root, bool subfolder)
        {
            _root = root;
            _subfolder = subfolder;
        }

        internal static FolderGraph Of(string root, params (string Path, string Text)[] extraFiles) => Of(root, null, extraFiles);

        /// <summary>The graph of <paramref name="scope"/>'s sub-folders (a folder of src/Spindle), or of src/Spindle's folders when null.</summary>
        internal static FolderGraph Of(string root, string? scope, params (string Path, string Text)[] extraFiles)
        {
            var parse = new CSharpParseOptions(LanguageVersion.Preview);
            List<SyntaxTree> trees = Directory.EnumerateFiles(root, "*.cs", SearchOption.AllDirectories)
                .Where(f => !IsBuildOutput(Path.GetRelativePath(root, f)))
                .Order(StringComparer.Ordinal)
                .Select(f => CSharpSyntaxTree.ParseText(File.ReadAllText(f), parse, f))
                .Concat(extraFiles.Select(e => CSharpSyntaxTree.ParseText(e.Text, parse, e.Path)))
                .ToList();
            // The project's implicit usings (ImplicitUsings=enable), so that every name binds as it does in the build.
            SyntaxTree implicitUsings = CSharpSyntaxTree.ParseText("global using System; global using System.Collections.Generic; "
                + "global using System.IO; global using System.Linq; global using System.Net.Http; global using System.Threading; "
                + "global using System.Threading.Tasks;", parse, Path.Combine(root, "obj", "ImplicitUsings.cs"));
            IEnumerable<MetadataReference> references = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!)
                .Split(Path.PathSeparator).Select(p => MetadataReference.CreateFromFile(p));
            CSharpCompilation compilation = CSharpCompilation.Create("Spindle", trees.Append(implicitUsings), references,
                new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, allowUnsafe: true));

            // Without the source generators some errors remain (LibraryImport's missing halves); a name that does not
            // bind would hide a dependency, so none may.
            string[] unbound = compilation.GetDiagnostics()
                .Where(d => d.Id is "CS0246" or "CS0103" or "CS0234" or "CS0117" or "CS1061" or "CS0012")
                .Select(d => d.ToString()).ToArray();
            Assert.True(unbound.Length == 0, "Names the analysis could not bind:\n" + string.Join("\n", unbound));

            var graph = scope is null ? new FolderGraph(root, subfolder: false) : new FolderGraph(Path.Combine(root, scope), subfolder: true);
            foreach (SyntaxTree tree in trees)
            {
                graph.Add(tree, compilation.GetSemanticModel(tree));
            }
            return graph;
        }

        private static bool IsBuildOutput(string relative)
            => relative.StartsWith("obj" + Path.DirectorySeparatorChar, StringComparison.Ordinal)
            || relative.StartsWith("bin" + Path.DirectorySeparatorChar, StringComparison.Ordinal);

        private string? FolderOf(string path)
        {
            string relative = Path.GetRelativePath(_root, path);
            if (_subfolder && relative.StartsWith("..", StringComparison.Ordinal))
            {
                return null;
            }
            int separator = relative.IndexOf(Path.DirectorySeparatorChar);
            return separator >= 0 ? relative[..separator] : _subfolder ? null : RootNode;
        }

        private void Add(SyntaxTree tree, SemanticModel model)
        {
            if (FolderOf(tree.FilePath) is not { } from)
            {
                return;
            }
            foreach (SimpleNameSyntax name in tree.GetRoot().DescendantNodes().OfType<SimpleNameSyntax>())
            {
                SymbolInfo info = model.GetSymbolInfo(name);
                ISymbol? symbol = info.Symbol ?? info.CandidateSymbols.FirstOrDefault();
                if (symbol is null or INamespaceSymbol or ILocalSymbol or IParameterSymbol or ILabelSymbol or IRangeVariableSymbol
                    or ITypeParameterSymbol)
                {
                    continue;
                }
                if (symbol is IMethodSymbol { ReducedFrom: { } extension })
                {
                    symbol = extension;
                }
                symbol = symbol.OriginalDefinition;
                List<string> declaredIn = symbol.Locations.Where(l => l.IsInSource).Select(l => l.SourceTree!.FilePath).ToList();
                List<string> folders = declaredIn.Select(FolderOf).OfType<string>().Distinct().ToList();
                if (folders.Count == 0 || folders.Contains(from))
                {
                    continue;
                }
                // A partial type declared in several folders (SpindleFile) belongs to the folder of its own file
                // (SpindleFile.cs); its members each belong where they are declared.
                string? home = declaredIn.FirstOrDefault(p => Path.GetFileName(p) == symbol.Name + ".cs");
                string? to = folders.Count == 1 ? folders[0] : home is not null ? FolderOf(home) : string.Join("+", folders.Order(StringComparer.Ordinal));
                if (to is null || to == from)
                {
                    continue;
                }
                if (!_edges.TryGetValue(from, out SortedDictionary<string, SortedSet<string>>? targets))
                {
                    _edges[from] = targets = new(StringComparer.Ordinal);
                }
                if (!targets.TryGetValue(to, out SortedSet<string>? evidence))
                {
                    targets[to] = evidence = new(StringComparer.Ordinal);
                }
                string member = symbol.ContainingType is { } type ? type.Name + "." + symbol.Name : symbol.Name;
                evidence.Add(Path.GetRelativePath(_root, tree.FilePath).Replace(Path.DirectorySeparatorChar, '/') + " -> " + member);
            }
        }

        /// <summary>The strongly connected components with more than one folder (Tarjan), each sorted.</summary>
        internal List<List<string>> Cycles()
        {
            List<string> nodes = _edges.Keys.Concat(_edges.Values.SelectMany(t => t.Keys)).Distinct().Order(StringComparer.Ordinal).ToList();
            var index = new Dictionary<string, int>();
            var low = new Dictionary<string, int>();
            var stack = new Stack<string>();
            var cycles = new List<List<string>>();
            foreach (string node in nodes)
            {
                if (!index.ContainsKey(node))
                {
                    Visit(node);
                }
            }
            return cycles;

            void Visit(string node)
            {
                index[node] = low[node] = index.Count;
                stack.Push(node);
                if (_edges.TryGetValue(node, out SortedDictionary<string, SortedSet<string>>? targets))
                {
                    foreach (string next in targets.Keys)
                    {
                        if (!index.ContainsKey(next))
                        {
                            Visit(next);
                            low[node] = Math.Min(low[node], low[next]);
                        }
                        else if (stack.Contains(next))
                        {
                            low[node] = Math.Min(low[node], index[next]);
                        }
                    }
                }
                if (low[node] == index[node])
                {
                    var component = new List<string>();
                    string member;
                    do
                    {
                        member = stack.Pop();
                        component.Add(member);
                    }
                    while (member != node);
                    if (component.Count > 1)
                    {
                        cycles.Add(component.Order(StringComparer.Ordinal).ToList());
                    }
                }
            }
        }

        internal string Describe()
        {
            var text = new StringBuilder();
            foreach ((string from, SortedDictionary<string, SortedSet<string>> targets) in _edges)
            {
                text.Append(from).Append(" -> ").AppendJoin(", ", targets.Keys).Append('\n');
            }
            return text.ToString();
        }

        internal string Explain(List<List<string>> cycles)
        {
            var text = new StringBuilder();
            foreach (List<string> cycle in cycles)
            {
                text.Append("cycle: ").AppendJoin(", ", cycle).Append('\n');
                foreach (string from in cycle)
                {
                    foreach (string to in cycle)
                    {
                        if (_edges.TryGetValue(from, out SortedDictionary<string, SortedSet<string>>? targets)
                            && targets.TryGetValue(to, out SortedSet<string>? evidence))
                        {
                            text.Append("  ").Append(from).Append(" -> ").Append(to).Append(":\n");
                            foreach (string reference in evidence.Take(10))
                            {
                                text.Append("    ").Append(reference).Append('\n');
                            }
                            if (evidence.Count > 10)
                            {
                                text.Append("    … ").Append(evidence.Count).Append(" references\n");
                            }
                        }
                    }
                }
            }
            return text.ToString();
        }
    }
}
