import SwiftDiagnostics

/// The errors `@Immutable` reports, with the fix-its it offers.
enum ImmutableDiagnostic: DiagnosticMessage {
    case notAStruct
    case mutableStoredProperty(name: String)
    case lazyProperty(name: String)
    case propertyWrapper(name: String, wrapper: String)
    case missingTypeAnnotation(name: String)
    case tuplePattern(pattern: String)
    case propertyInsideIfConfig(name: String)
    case reservedName(name: String)
    case unknownMergeStrategy(String)
    case unknownLatestField(name: String)
    case ignoredPropertyNotInitialized(name: String, initializer: String)
    case ignoredPropertyNeedsPlainInitializer(name: String, initializer: String)
    case privateFieldType(typeName: String, field: String)
    case mergeStrategyWithoutMerge(typeName: String)

    var message: String {
        switch self {
        case .notAStruct:
            "'@Immutable' can only be applied to a struct"
        case .mutableStoredProperty(let name):
            "stored property '\(name)' of an immutable model must be 'let'"
        case .lazyProperty(let name):
            "lazy property '\(name)' changes on first use, which an immutable model cannot; make it a computed property"
        case .propertyWrapper(let name, let wrapper):
            "stored property '\(name)' of an immutable model must be 'let', which '@\(wrapper)' does not allow; "
                + "remove the wrapper or make '\(name)' computed"
        case .missingTypeAnnotation(let name):
            "'@Immutable' needs an explicit type for '\(name)'"
        case .tuplePattern(let pattern):
            "'@Immutable' needs one name per stored property; declare each name of '\(pattern)' in its own 'let'"
        case .propertyInsideIfConfig(let name):
            "'@Immutable' cannot generate members for stored property '\(name)' inside '#if'; "
                + "declare it outside the '#if', or give it an initial value"
        case .reservedName(let name):
            "'@Immutable' cannot generate an initializer parameter named '\(name)'; rename the property"
        case .unknownMergeStrategy(let strategy):
            "unknown merge strategy '\(strategy)'; use .union, .counter, .mine, .theirs or .latest(by: \"field\")"
        case .ignoredPropertyNotInitialized(let name, let initializer):
            "'@ImmutableIgnored' leaves '\(name)' out of the generated initializer; "
                + "give it an initial value, or write '\(initializer)' that sets it"
        case .ignoredPropertyNeedsPlainInitializer(let name, let initializer):
            "'@ImmutableIgnored' leaves '\(name)' to the initializer with the fields' labels, which every copy goes "
                + "through; it must be '\(initializer)', taking each field as declared, and neither fail nor throw"
        case .privateFieldType(let typeName, let field):
            "'\(field)' is mirrored in 'Draft' and 'Partial', which cannot hold a 'private' type of the model; "
                + "make '\(typeName)' 'fileprivate'"
        case .mergeStrategyWithoutMerge(let typeName):
            "'@Merge' has no 'merge' to act on: '\(typeName)' is not Mergeable; "
                + "declare 'Equatable' or 'Hashable', or write '@Immutable(mergeable: true)'"
        case .unknownLatestField(let name):
            "'.latest(by:)' names '\(name)', which is not a settable stored property of this model"
        }
    }

    var diagnosticID: MessageID {
        let id =
            switch self {
            case .notAStruct: "notAStruct"
            case .mutableStoredProperty: "mutableStoredProperty"
            case .lazyProperty: "lazyProperty"
            case .propertyWrapper: "propertyWrapper"
            case .missingTypeAnnotation: "missingTypeAnnotation"
            case .tuplePattern: "tuplePattern"
            case .propertyInsideIfConfig: "propertyInsideIfConfig"
            case .reservedName: "reservedName"
            case .unknownMergeStrategy: "unknownMergeStrategy"
            case .unknownLatestField: "unknownLatestField"
            case .ignoredPropertyNotInitialized: "ignoredPropertyNotInitialized"
            case .ignoredPropertyNeedsPlainInitializer: "ignoredPropertyNeedsPlainInitializer"
            case .privateFieldType: "privateFieldType"
            case .mergeStrategyWithoutMerge: "mergeStrategyWithoutMerge"
            }
        return MessageID(domain: "AmberMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}

/// The fix-its attached to ``ImmutableDiagnostic``.
enum ImmutableFixIt: FixItMessage {
    case replaceVarWithLet
    case replaceVarWithDefaultedLet(type: String)
    case makeFileprivate(name: String)

    var message: String {
        switch self {
        case .replaceVarWithLet: "Replace 'var' with 'let'"
        case .replaceVarWithDefaultedLet(let type):
            "Replace with 'let' of type '\(type)', its initial value the default of the generated initializer"
        case .makeFileprivate(let name): "Make '\(name)' 'fileprivate'"
        }
    }

    var fixItID: MessageID {
        let id =
            switch self {
            case .replaceVarWithLet: "replaceVarWithLet"
            case .replaceVarWithDefaultedLet: "replaceVarWithDefaultedLet"
            case .makeFileprivate: "makeFileprivate"
            }
        return MessageID(domain: "AmberMacros", id: id)
    }
}
