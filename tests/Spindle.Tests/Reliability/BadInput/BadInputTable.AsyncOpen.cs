using Microsoft.Win32.SafeHandles;
using static Spindle.Tests.Reliability.BadInput.BadInputCase;

namespace Spindle.Tests.Reliability.BadInput;

public static partial class BadInputTable
{
    // The asynchronous opens: every case of their synchronous counterparts, waited for (bad arguments are thrown by
    // the call, I/O errors come out of the task; both are compared by type).
    private static void AddAsyncOpenRows()
    {
        Rows["SpindleFile.OpenHandleAsync(String, FileMode, FileAccess, FileShare, FileOptions, Int64, CancellationToken)"] = c => OpenHandleCases(c,
            (path, mode, access, share, options, preallocation) => Result(SpindleFile.OpenHandleAsync(path, mode, access, share, options, preallocation)).Dispose());
        Rows["SpindleFile.OpenHandleAsync(String, SpindleFileOptions, CancellationToken)"] = c =>
        [
            .. OpenHandleCases(c, (path, mode, access, share, options, preallocation) => Result(SpindleFile.OpenHandleAsync(path,
                new SpindleFileOptions { Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation })).Dispose(),
                (path, mode, access, share, options, preallocation) =>
                {
                    new FileStream(path, new FileStreamOptions { Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation }).Dispose();
                }).Select(k => k with { CompareParamName = false }),
            Throws<ArgumentNullException>("null options", () => SpindleFile.OpenHandleAsync(c.SpindlePath, null!), () => new FileStream(c.SystemPath, (FileStreamOptions)null!)),
        ];
        Rows["SpindleFileStream.OpenAsync(String, SpindleFileOptions, CancellationToken)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => Result(SpindleFileStream.OpenAsync(p, new SpindleFileOptions { Mode = m, Access = FileAccess.ReadWrite })),
                (p, m) => new FileStream(p, new FileStreamOptions { Mode = m, Access = FileAccess.ReadWrite })),
            Throws<ArgumentNullException>("null options", () => SpindleFileStream.OpenAsync(c.SpindlePath, (SpindleFileOptions)null!), () => new FileStream(c.SystemPath, (FileStreamOptions)null!)),
        ];
        Rows["SpindleFileStream.OpenAsync(String, FileStreamOptions, CancellationToken)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => Result(SpindleFileStream.OpenAsync(p, new FileStreamOptions { Mode = m, Access = FileAccess.ReadWrite })),
                (p, m) => new FileStream(p, new FileStreamOptions { Mode = m, Access = FileAccess.ReadWrite })),
            Throws<ArgumentNullException>("null options", () => SpindleFileStream.OpenAsync(c.SpindlePath, (FileStreamOptions)null!), () => new FileStream(c.SystemPath, (FileStreamOptions)null!)),
        ];
    }

    private static T Result<T>(ValueTask<T> task) => task.AsTask().GetAwaiter().GetResult();
}
