using System.IO.Compression;
using System.Xml.Linq;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Package;

/// <summary>
/// What `dotnet pack src/Spindle` produces: the library with its XML docs, the package README, the MIT licence
/// expression, repository metadata, tags, and a symbols package with the pdb. Packs the build the tests ran on.
/// </summary>
public class PackageContentsTests(ITestOutputHelper output)
{
    [Fact]
    public void The_package_holds_the_library_docs_readme_licence_and_a_symbols_package()
    {
        using var directory = new TempDirectory();
        string feed = directory.File("feed");
        (int code, string log) = Pack(feed);
        Assert.True(code == 0, log);
        Assert.DoesNotContain("warning", log, StringComparison.OrdinalIgnoreCase);

        string package = Assert.Single(Directory.GetFiles(feed, "Spindle.*.nupkg"), f => !f.EndsWith(".snupkg", StringComparison.Ordinal));
        string symbols = Assert.Single(Directory.GetFiles(feed, "Spindle.*.snupkg"));

        using (ZipArchive zip = ZipFile.OpenRead(package))
        {
            string[] entries = zip.Entries.Select(e => e.FullName).Order().ToArray();
            output.WriteLine($"{Path.GetFileName(package)}:\n  " + string.Join("\n  ", entries));
            Assert.Contains("lib/net10.0/Spindle.dll", entries);
            Assert.Contains("lib/net10.0/Spindle.xml", entries);
            Assert.Contains("PACKAGE.md", entries);

            XDocument nuspec = XDocument.Load(zip.Entries.Single(e => e.FullName == "Spindle.nuspec").Open());
            XNamespace ns = nuspec.Root!.Name.Namespace;
            XElement metadata = nuspec.Root.Element(ns + "metadata")!;
            XElement license = metadata.Element(ns + "license")!;
            Assert.Equal(("expression", "MIT"), (license.Attribute("type")!.Value, license.Value));
            Assert.Equal("PACKAGE.md", metadata.Element(ns + "readme")!.Value);
            XElement repository = metadata.Element(ns + "repository")!;
            Assert.Equal("git", repository.Attribute("type")!.Value);
            Assert.StartsWith("https://github.com/", repository.Attribute("url")!.Value);
            Assert.Contains("io_uring", metadata.Element(ns + "tags")!.Value);
            Assert.False(string.IsNullOrWhiteSpace(metadata.Element(ns + "authors")?.Value));

            using var readme = new StreamReader(zip.Entries.Single(e => e.FullName == "PACKAGE.md").Open());
            string text = readme.ReadToEnd();
            Assert.Contains("dotnet add package Spindle", text);
            Assert.Contains("SpindleRandomAccess", text);
        }

        using (ZipArchive zip = ZipFile.OpenRead(symbols))
        {
            string[] entries = zip.Entries.Select(e => e.FullName).ToArray();
            output.WriteLine($"{Path.GetFileName(symbols)}:\n  " + string.Join("\n  ", entries.Order()));
            Assert.Contains("lib/net10.0/Spindle.pdb", entries);
        }
    }

    // Packs the library as built for this test run (same configuration, no second build).
    private static (int Code, string Log) Pack(string feed)
    {
        string root = RepositoryRoot();
        string configuration = new DirectoryInfo(Path.TrimEndingDirectorySeparator(AppContext.BaseDirectory)).Parent!.Name; // bin/<Configuration>/net10.0
        var start = new System.Diagnostics.ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = root,
        };
        foreach (string arg in new[] { "pack", Path.Combine(root, "src", "Spindle", "Spindle.csproj"), "-c", configuration, "--no-build", "--nologo", "-o", feed })
        {
            start.ArgumentList.Add(arg);
        }
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        using var process = System.Diagnostics.Process.Start(start)!;
        Task<string> error = process.StandardError.ReadToEndAsync();
        string log = process.StandardOutput.ReadToEnd();
        if (!process.WaitForExit(300_000))
        {
            process.Kill(entireProcessTree: true);
            return (-1, "dotnet pack did not finish in 300 s\n" + log);
        }
        return (process.ExitCode, log + error.Result);
    }

    private static string RepositoryRoot()
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
