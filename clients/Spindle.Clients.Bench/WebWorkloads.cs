using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;
using Spindle.AspNetCore;

namespace Spindle.Clients.Bench;

/// <summary>
/// A web server's files: ASP.NET Core static files on Spindle against <see cref="PhysicalFileProvider"/>, a blob
/// endpoint reading random 16 KiB blocks through Spindle against System.IO's RandomAccess, both on Kestrel on
/// loopback under wrk (64 connections) or a bounded HttpClient loop; and the content twins of
/// <see cref="File"/> on many small files. Cold rows drop the page cache before each round (root only; the row
/// says when it could not).
/// </summary>
internal static partial class WebWorkloads
{
    private const int Connections = 64;

    public static IEnumerable<Workload> All(BenchSettings settings)
    {
        bool quick = settings.Quick;
        int seconds = quick ? 3 : 10;
        string coldNote = CanDropCaches ? "cold" : "cold asked, not root: warm";
        int smallFiles = quick ? 2_000 : 10_000;
        int largeFiles = quick ? 64 : 256;
        yield return new("Static files 4 KiB, page cache warm", "PhysicalFileProvider", new Goal(1.2), (d, s) => StaticFiles(d, s, smallFiles, 4096, cold: false, seconds));
        yield return new($"Static files 4 KiB, page cache {coldNote}", "PhysicalFileProvider", new Goal(1.2), (d, s) => StaticFiles(d, s, smallFiles, 4096, cold: true, seconds));
        yield return new("Static files 1 MiB, page cache warm", "PhysicalFileProvider", new Goal(1.0), (d, s) => StaticFiles(d, s, largeFiles, 1 << 20, cold: false, seconds));
        yield return new($"Static files 1 MiB, page cache {coldNote}", "PhysicalFileProvider", new Goal(1.0), (d, s) => StaticFiles(d, s, largeFiles, 1 << 20, cold: true, seconds));
        long blob = quick ? 256L << 20 : 1L << 30;
        yield return new($"Blob endpoint, random 16 KiB of {blob >> 20} MiB, Spindle O_DIRECT vs System.IO {coldNote}", "RandomAccess.ReadAsync", new Goal(1.3), (d, s) => Blob(d, s, blob, direct: true, seconds));
        yield return new($"Blob endpoint, random 16 KiB of {blob >> 20} MiB, page cache", "RandomAccess.ReadAsync", new Goal(1.0), (d, s) => Blob(d, s, blob, direct: false, seconds));
        int files = quick ? 2_000 : 10_000;
        yield return new($"Files: {files:N0} × 4 KiB ReadAllBytesAsync, 64 at a time, {coldNote}", "File.ReadAllBytesAsync", new Goal(2), (d, s) => ReadMany(d, s, files, cold: true));
        yield return new($"Files: {files:N0} × 4 KiB ReadAllBytesAsync, 64 at a time, warm", "File.ReadAllBytesAsync", new Goal(1.2), (d, s) => ReadMany(d, s, files, cold: false));
        yield return new("Files: one 4 KiB file ReadAllBytesAsync, one at a time", "File.ReadAllBytesAsync", new Goal(1.0), (d, s) => ReadOne(d, s, quick ? 20_000 : 100_000));
        yield return new($"Files: {files:N0} × 4 KiB WriteAllBytesAsync, 64 at a time", "File.WriteAllBytesAsync", new Goal(1.5), (d, s) => WriteMany(d, s, files));
    }

    private static bool CanDropCaches => Environment.UserName == "root" && File.Exists("/proc/sys/vm/drop_caches");

    private static void DropCaches()
    {
        if (CanDropCaches)
        {
            Process.Start("sync")!.WaitForExit();
            File.WriteAllText("/proc/sys/vm/drop_caches", "3");
        }
    }

    private static void MakeFiles(string directory, int count, int size)
    {
        byte[] contents = new byte[size];
        Random.Shared.NextBytes(contents);
        for (int i = 0; i < count; i++)
        {
            File.WriteAllBytes(Path.Combine(directory, $"f{i}.bin"), contents);
        }
    }

    private static Measurement StaticFiles(string directory, bool onSpindle, int count, int size, bool cold, int seconds)
    {
        string root = Directory.CreateDirectory(Path.Combine(directory, "www")).FullName;
        MakeFiles(root, count, size);
        return Serve(app =>
        {
            if (onSpindle)
            {
                app.UseSpindleStaticFiles(root);
            }
            else
            {
                app.UseStaticFiles(new StaticFileOptions { FileProvider = new PhysicalFileProvider(root) });
            }
        }, count, "/f{0}.bin", cold, seconds, directory);
    }

    private static Measurement Blob(string directory, bool onSpindle, long length, bool direct, int seconds)
    {
        string path = Path.Combine(directory, "blob");
        using (var file = new FileStream(path, FileMode.Create))
        {
            byte[] chunk = new byte[1 << 20];
            Random.Shared.NextBytes(chunk);
            for (long written = 0; written < length; written += chunk.Length)
            {
                file.Write(chunk);
            }
        }
        const int Block = 16 << 10;
        long blocks = length / Block;
        SafeFileHandle handle = onSpindle
            ? SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, Options = FileOptions.Asynchronous, DirectIO = direct })
            : File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.Asynchronous);
        if (!direct)
        {
            // Page-cache row: every block in memory first.
            using var warm = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 20);
            warm.CopyTo(Stream.Null);
        }
        try
        {
            return Serve(app => app.Run(async context =>
            {
                long block = Random.Shared.NextInt64(blocks);
                if (onSpindle)
                {
                    using var owner = AlignedMemoryPool.Shared.Rent(Block);
                    Memory<byte> buffer = owner.Memory[..Block];
                    int read = await SpindleRandomAccess.ReadAsync(handle, buffer, block * Block);
                    context.Response.ContentLength = read;
                    await context.Response.Body.WriteAsync(buffer[..read]);
                }
                else
                {
                    byte[] buffer = System.Buffers.ArrayPool<byte>.Shared.Rent(Block);
                    int read = await System.IO.RandomAccess.ReadAsync(handle, buffer.AsMemory(0, Block), block * Block);
                    context.Response.ContentLength = read;
                    await context.Response.Body.WriteAsync(buffer.AsMemory(0, read));
                    System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
                }
            }), 1, "/blob", cold: direct, seconds, directory);
        }
        finally
        {
            handle.Dispose();
        }
    }

    /// <summary>Starts Kestrel on 127.0.0.1, loads it for <paramref name="seconds"/> and returns the requests served.</summary>
    private static Measurement Serve(Action<IApplicationBuilder> configure, int paths, string pathFormat, bool cold, int seconds, string directory)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0));
        WebApplication app = builder.Build();
        configure(app);
        app.StartAsync().GetAwaiter().GetResult();
        try
        {
            string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
            if (cold)
            {
                DropCaches();
            }
            var clock = RunClock.Start();
            long requests = File.Exists("/usr/bin/wrk")
                ? Wrk(address, paths, pathFormat, seconds, directory)
                : HttpLoop(address, paths, pathFormat, seconds);
            clock.Stop();
            return clock.Result(requests);
        }
        finally
        {
            app.StopAsync().GetAwaiter().GetResult();
            ((IAsyncDisposable)app).DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }

    private static long Wrk(string address, int paths, string pathFormat, int seconds, string directory)
    {
        string script = Path.Combine(directory, "paths.lua");
        string format = pathFormat.Replace("{0}", "\" .. math.random(0, " + (paths - 1).ToString(CultureInfo.InvariantCulture) + ") .. \"");
        File.WriteAllText(script, $"request = function() return wrk.format(nil, \"{format}\") end\n");
        var start = new ProcessStartInfo("/usr/bin/wrk", ["-t2", $"-c{Connections}", $"-d{seconds}s", "-s", script, address])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using Process wrk = Process.Start(start)!;
        string output = wrk.StandardOutput.ReadToEnd();
        wrk.WaitForExit();
        Match match = RequestsLine().Match(output);
        return match.Success ? long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture) : throw new InvalidOperationException("wrk: " + output);
    }

    [GeneratedRegex(@"(\d+) requests in")]
    private static partial Regex RequestsLine();

    private static long HttpLoop(string address, int paths, string pathFormat, int seconds)
    {
        using var client = new HttpClient { BaseAddress = new Uri(address) };
        long requests = 0;
        var deadline = Stopwatch.StartNew();
        Task[] workers = Enumerable.Range(0, Connections).Select(async _ =>
        {
            while (deadline.Elapsed.TotalSeconds < seconds)
            {
                using HttpResponseMessage response = await client.GetAsync(string.Format(CultureInfo.InvariantCulture, pathFormat, Random.Shared.Next(paths)));
                await response.Content.CopyToAsync(Stream.Null);
                Interlocked.Increment(ref requests);
            }
        }).ToArray();
        Task.WaitAll(workers);
        return requests;
    }

    private static Measurement ReadMany(string directory, bool onSpindle, int count, bool cold)
    {
        MakeFiles(directory, count, 4096);
        string[] paths = Enumerable.Range(0, count).Select(i => Path.Combine(directory, $"f{i}.bin")).ToArray();
        if (cold)
        {
            DropCaches();
        }
        var clock = RunClock.Start();
        Parallel.ForEachAsync(paths, new ParallelOptions { MaxDegreeOfParallelism = 64 }, async (path, token) =>
        {
            byte[] bytes = onSpindle ? await SpindleFile.ReadAllBytesAsync(path, token) : await File.ReadAllBytesAsync(path, token);
            if (bytes.Length != 4096)
            {
                throw new InvalidOperationException(path);
            }
        }).GetAwaiter().GetResult();
        clock.Stop();
        return clock.Result(count);
    }

    private static Measurement ReadOne(string directory, bool onSpindle, int reads)
    {
        MakeFiles(directory, 1, 4096);
        string path = Path.Combine(directory, "f0.bin");
        var clock = RunClock.Start();
        for (int i = 0; i < reads; i++)
        {
            _ = onSpindle ? SpindleFile.ReadAllBytesAsync(path).GetAwaiter().GetResult() : File.ReadAllBytesAsync(path).GetAwaiter().GetResult();
        }
        clock.Stop();
        return clock.Result(reads);
    }

    private static Measurement WriteMany(string directory, bool onSpindle, int count)
    {
        byte[] contents = new byte[4096];
        Random.Shared.NextBytes(contents);
        string[] paths = Enumerable.Range(0, count).Select(i => Path.Combine(directory, $"w{i}.bin")).ToArray();
        var clock = RunClock.Start();
        Parallel.ForEachAsync(paths, new ParallelOptions { MaxDegreeOfParallelism = 64 }, async (path, token) =>
        {
            if (onSpindle)
            {
                await SpindleFile.WriteAllBytesAsync(path, contents, token);
            }
            else
            {
                await File.WriteAllBytesAsync(path, contents, token);
            }
        }).GetAwaiter().GetResult();
        clock.Stop();
        return clock.Result(count);
    }
}
