import SwiftDiagnostics

/// The errors `@Immutable` reports, with the fix-its it offers.
enum ImmutableDiagnostic: DiagnosticMessage {
    case notAStruct
    case mutableStoredProperty(name: String)
    case missingTypeAnnotation(name: String)

    var message: String {
        switch self {
        case .notAStruct:
            "'@Immutable' can only be applied to a struct"
        case .mutableStoredProperty(let name):
            "stored property '\(name)' of an immutable model must be 'let'"
        case .missingTypeAnnotation(let name):
            "'@Immutable' needs an explicit type for '\(name)'"
        }
    }

    var diagnosticID: MessageID {
        let id = switch self {
        case .notAStruct: "notAStruct"
        case .mutableStoredProperty: "mutableStoredProperty"
        case .missingTypeAnnotation: "missingTypeAnnotation"
        }
        return MessageID(domain: "AmberMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}

/// The fix-its attached to ``ImmutableDiagnostic``.
enum ImmutableFixIt: FixItMessage {
    case replaceVarWithLet

    var message: String {
        switch self {
        case .replaceVarWithLet: "Replace 'var' with 'let'"
        }
    }

    var fixItID: MessageID {
        MessageID(domain: "AmberMacros", id: "replaceVarWithLet")
    }
}
