namespace Spindle.Workloads;

/// <summary>Whether a row reads or writes.</summary>
public enum Direction
{
    /// <summary>The row reads an existing file.</summary>
    Read,

    /// <summary>The row writes a file.</summary>
    Write,
}
