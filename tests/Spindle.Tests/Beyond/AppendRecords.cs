using System.Text;

namespace Spindle.Tests.Beyond;

/// <summary>
/// Self-checking records for append tests: one line per record, <c>W:SSSSSS:LLLL:payload</c>, whose
/// payload length and letters follow from the header, so a torn, overwritten or interleaved record is seen.
/// </summary>
internal static class AppendRecords
{
    internal static byte[] Make(int writer, int sequence, int payloadLength)
    {
        var text = new StringBuilder();
        text.Append(writer).Append(':').Append(sequence.ToString("D6")).Append(':').Append(payloadLength.ToString("D4")).Append(':');
        char letter = Letter(writer, sequence);
        text.Append(letter, payloadLength).Append('\n');
        return Encoding.ASCII.GetBytes(text.ToString());
    }

    /// <summary>Counts intact records per writer and the lines that are not an intact record.</summary>
    internal static (Dictionary<int, HashSet<int>> Intact, int Damaged) Check(byte[] file)
    {
        var intact = new Dictionary<int, HashSet<int>>();
        int damaged = 0;
        foreach (string line in Encoding.ASCII.GetString(file).Split('\n'))
        {
            if (line.Length == 0)
            {
                continue;
            }
            string[] parts = line.Split(':');
            if (parts.Length == 4 && int.TryParse(parts[0], out int writer) && int.TryParse(parts[1], out int sequence) &&
                int.TryParse(parts[2], out int length) && parts[3].Length == length && parts[3].All(c => c == Letter(writer, sequence)) &&
                (intact.TryGetValue(writer, out HashSet<int>? seen) ? seen : intact[writer] = []).Add(sequence))
            {
                continue;
            }
            damaged++;
        }
        return (intact, damaged);
    }

    private static char Letter(int writer, int sequence) => (char)('a' + (writer * 7 + sequence) % 26);
}
