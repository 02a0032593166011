// Runs Spindle.Faster, which is Linux only (O_DIRECT and io_uring); said once for the platform analyzer.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
