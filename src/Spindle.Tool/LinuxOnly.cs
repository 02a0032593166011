// The tool measures Linux I/O paths (io_uring, O_DIRECT, page-cache fast paths); it uses Spindle's Linux-only
// options freely, so it says so once for the platform analyzer instead of guarding each call.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
