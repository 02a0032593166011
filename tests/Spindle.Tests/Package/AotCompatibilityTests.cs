using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using Spindle.Diagnostics;

namespace Spindle.Tests.Package;

/// <summary>
/// Spindle loads the assemblies it references at its first use (so that a process out of descriptors later
/// cannot make a load fail for good), by naming one type of each: no reflection, which Native AOT cannot do
/// (the app would die before Main) and trimming may break. The AOT app itself runs in CI (.ci/aot).
/// </summary>
public class AotCompatibilityTests
{
    [Fact]
    public void The_dependency_loader_names_a_type_of_every_assembly_Spindle_references()
    {
        using var pe = new PEReader(File.OpenRead(typeof(SpindleFile).Assembly.Location));
        MetadataReader metadata = pe.GetMetadataReader();
        string[] references = metadata.AssemblyReferences
            .Select(h => metadata.GetString(metadata.GetAssemblyReference(h).Name)).Order().ToArray();
        // Where Spindle's metadata says each named type comes from (the reference assembly, not where it is implemented).
        var scopes = new Dictionary<string, string>();
        foreach (TypeReferenceHandle handle in metadata.TypeReferences)
        {
            TypeReference type = metadata.GetTypeReference(handle);
            if (type.ResolutionScope.Kind == HandleKind.AssemblyReference)
            {
                scopes[metadata.GetString(type.Namespace) + "." + metadata.GetString(type.Name)] =
                    metadata.GetString(metadata.GetAssemblyReference((AssemblyReferenceHandle)type.ResolutionScope).Name);
            }
        }
        Type[] named = DependencyLoader.OneTypePerReferencedAssembly();
        string[] loaded = named.Select(t => scopes[t.Namespace + "." + t.Name]).Distinct().Order().ToArray();

        Assert.Equal(references, loaded);
        Assert.Equal(DependencyLoader.ReferencedAssemblyCount, references.Length);
    }
}
