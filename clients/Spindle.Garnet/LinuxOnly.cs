// The device is O_DIRECT and io_uring through Spindle's Linux-only options; said once for the platform analyzer
// instead of guarding each call.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
