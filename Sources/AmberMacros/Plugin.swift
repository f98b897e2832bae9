import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct AmberMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [ImmutableMacro.self, FieldMarkerMacro.self]
}
