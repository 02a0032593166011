using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace Spindle.AspNetCore;

/// <summary>Puts ASP.NET Core's static files (and anything else that sends files) on Spindle.</summary>
public static class SpindleStaticFileExtensions
{
    /// <summary>
    /// Makes every <c>SendFileAsync</c> of the requests that pass through read the file with Spindle: the static
    /// files middleware, <c>Results.File</c> with a path, and <c>HttpResponse.SendFileAsync</c>. Headers, ranges,
    /// ETags and status codes are untouched; only where the bytes come from changes.
    /// </summary>
    /// <param name="app">The application; call this before <c>UseStaticFiles</c>.</param>
    /// <returns>The application.</returns>
    public static IApplicationBuilder UseSpindleSendFile(this IApplicationBuilder app)
    {
        ArgumentNullException.ThrowIfNull(app);
        return app.Use(static (context, next) =>
        {
            IHttpResponseBodyFeature? body = context.Features.Get<IHttpResponseBodyFeature>();
            if (body is not null and not SpindleSendFileFeature)
            {
                context.Features.Set<IHttpResponseBodyFeature>(new SpindleSendFileFeature(body));
            }
            return next(context);
        });
    }

    /// <summary>
    /// Serves the static files under <paramref name="root"/> through Spindle: <see cref="UseSpindleSendFile"/> and
    /// <c>UseStaticFiles</c> with a <see cref="SpindleFileProvider"/>.
    /// </summary>
    /// <param name="app">The application.</param>
    /// <param name="root">An absolute path to the directory to serve.</param>
    /// <param name="requestPath">The URL path the files are served under; empty for the root.</param>
    /// <returns>The application.</returns>
    public static IApplicationBuilder UseSpindleStaticFiles(this IApplicationBuilder app, string root, string requestPath = "")
        => app.UseSpindleStaticFiles(root, new SpindleFileProviderOptions(), requestPath);

    /// <summary>
    /// Serves the static files under <paramref name="root"/> through Spindle: <see cref="UseSpindleSendFile"/> and
    /// <c>UseStaticFiles</c> with a <see cref="SpindleFileProvider"/> made with <paramref name="options"/>.
    /// </summary>
    /// <param name="app">The application.</param>
    /// <param name="root">An absolute path to the directory to serve.</param>
    /// <param name="options">What the provider serves beyond <c>PhysicalFileProvider</c>'s rules, such as <see cref="SpindleFileProviderOptions.RefuseLinksOutsideRoot"/>.</param>
    /// <param name="requestPath">The URL path the files are served under; empty for the root.</param>
    /// <returns>The application.</returns>
    public static IApplicationBuilder UseSpindleStaticFiles(this IApplicationBuilder app, string root, SpindleFileProviderOptions options, string requestPath = "")
    {
        ArgumentNullException.ThrowIfNull(app);
        var provider = new SpindleFileProvider(root, options);
        app.UseSpindleSendFile();
        return app.UseStaticFiles(new StaticFileOptions { FileProvider = provider, RequestPath = new PathString(requestPath) });
    }
}
