import SwiftDiagnostics
import SwiftSyntax

/// Walks a struct's members, `#if` blocks included, collecting fields and reporting what it cannot handle.
struct FieldReader {
    let typeName: String
    let members: MemberBlockItemListSyntax
    /// Types declared in the struct and its generic parameters: never function typealiases.
    let knownTypes: Set<String>
    let diagnose: ((Diagnostic) -> Void)?
    var fields: [ModelDescription.Field] = []
    var isValid = true
    /// The `.latest(by:)` strategies, checked once every field is known.
    var latestStrategies: [(field: String, node: Syntax)] = []
    /// Every `@Merge` attribute on a field, which only a mergeable model uses.
    var mergeAttributes: [AttributeSyntax] = []
    /// Properties marked `@ImmutableIgnored` that something must still initialize.
    var ignoredProperties: [(name: String, attribute: AttributeSyntax)] = []

    init(
        typeName: String, members: MemberBlockItemListSyntax, knownTypes: Set<String>,
        diagnose: ((Diagnostic) -> Void)?
    ) {
        self.typeName = typeName
        self.members = members
        self.knownTypes = knownTypes
        self.diagnose = diagnose
    }

    mutating func fail(_ node: some SyntaxProtocol, _ message: ImmutableDiagnostic, fixIts: [FixIt] = []) {
        isValid = false
        diagnose?(Diagnostic(node: Syntax(node), message: message, fixIts: fixIts))
    }

    mutating func read(_ members: MemberBlockItemListSyntax, insideIfConfig: Bool) {
        for member in members {
            if let ifConfig = member.decl.as(IfConfigDeclSyntax.self) {
                for clause in ifConfig.clauses {
                    if case .decls(let nested) = clause.elements { read(nested, insideIfConfig: true) }
                }
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self), !variable.isStatic else { continue }
            read(variable, insideIfConfig: insideIfConfig)
        }
    }

    private mutating func read(_ variable: VariableDeclSyntax, insideIfConfig: Bool) {
        let bindings = Array(variable.bindings)
        for (index, binding) in bindings.enumerated() where binding.isStored {
            let name = binding.pattern.trimmedDescription.filter { $0 != "`" }
            if variable.bindingSpecifier.tokenKind == .keyword(.var) {
                reportMutable(variable, binding: binding, name: name)
                continue
            }
            // A property with an initial value cannot be set, so it is not a field.
            if binding.initializer != nil { continue }
            if let ignored = variable.attributes.attribute(named: "ImmutableIgnored") {
                ignoredProperties.append((name, ignored))
                continue
            }
            guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                fail(binding.pattern, .tuplePattern(pattern: binding.pattern.trimmedDescription))
                continue
            }
            if insideIfConfig {
                fail(pattern, .propertyInsideIfConfig(name: name))
                continue
            }
            if name == "self" {
                fail(pattern, .reservedName(name: name))
                continue
            }
            // `let a, b: Int` gives `a` the type written after `b`.
            let annotation =
                binding.typeAnnotation?.type
                ?? bindings[index...].lazy.compactMap { $0.typeAnnotation?.type }.first
            guard let annotation else {
                fail(pattern, .missingTypeAnnotation(name: name))
                continue
            }
            let type = annotation.trimmed
            let aliases = members.functionTypeAliases
            let isFunction = type.isFunction(aliases: aliases)
            fields.append(
                ModelDescription.Field(
                    identifier: pattern.identifier.trimmed.text,
                    name: name,
                    type: type,
                    mirroredType: type.spellingModel(named: typeName, as: ModelDescription.selfAlias),
                    isOptional: type.isOptional,
                    isFunction: isFunction,
                    mayBeFunctionAlias: !isFunction
                        && type.mayBeFunctionAlias(known: knownTypes.union([typeName]).union(aliases)),
                    defaultValue: variable.attributes.attribute(named: "ImmutableDefault")?
                        .arguments?.as(LabeledExprListSyntax.self)?.first?.expression.trimmedDescription,
                    access: variable.accessLevel,
                    mergeStrategy: mergeStrategy(of: variable),
                    isDeprecated: variable.attributes.isDeprecated
                ))
        }
    }

    private mutating func reportMutable(_ variable: VariableDeclSyntax, binding: PatternBindingSyntax, name: String) {
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            fail(binding.pattern, .lazyProperty(name: name))
            return
        }
        if let wrapper = variable.attributes.propertyWrapperName {
            fail(binding.pattern, .propertyWrapper(name: name, wrapper: wrapper))
            return
        }
        // `let` cannot have `willSet`/`didSet`, so there is no obvious edit for an observed `var`.
        let fixIts = binding.accessorBlock == nil ? [Self.letFixIt(variable, binding: binding)].compactMap { $0 } : []
        fail(binding.pattern, .mutableStoredProperty(name: name), fixIts: fixIts)
    }

    /// `var x = 0` becomes `@ImmutableDefault(0) let x: Int`: still a field, its default in the
    /// generated `init`; `let x = 0` would be a constant. `var x: T` becomes `let x: T`. No fix-it
    /// when the type cannot be written.
    private static func letFixIt(_ variable: VariableDeclSyntax, binding: PatternBindingSyntax) -> FixIt? {
        guard let initializer = binding.initializer else {
            return FixIt(
                message: ImmutableFixIt.replaceVarWithLet,
                changes: [
                    .replace(
                        oldNode: Syntax(variable.bindingSpecifier),
                        newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.let))))
                ])
        }
        guard variable.bindings.count == 1,
            let type = binding.typeAnnotation?.type.trimmedDescription ?? initializer.value.literalTypeName
        else { return nil }
        let asLet = variable.with(\.bindingSpecifier, variable.bindingSpecifier.with(\.tokenKind, .keyword(.let)))
        let value = initializer.value.trimmedDescription
        // A literal whose type comes from its context gets the field's type written out.
        let needsType =
            initializer.value.is(ArrayExprSyntax.self) || initializer.value.is(DictionaryExprSyntax.self)
            || initializer.value.is(NilLiteralExprSyntax.self)
            || initializer.value.as(MemberAccessExprSyntax.self)?.base == nil
                && initializer.value.is(MemberAccessExprSyntax.self)
        let argument = needsType ? "\(value) as \(type)" : value
        let newBinding = binding.with(\.initializer, nil)
            .with(\.pattern, binding.pattern.trimmed)
            .with(
                \.typeAnnotation,
                TypeAnnotationSyntax(
                    colon: .colonToken(trailingTrivia: .space),
                    type: TypeSyntax(stringLiteral: type)))
        let attribute = AttributeSyntax(
            attributeName: TypeSyntax(stringLiteral: "ImmutableDefault"),
            leftParen: .leftParenToken(),
            arguments: .argumentList([LabeledExprSyntax(expression: ExprSyntax(stringLiteral: argument))]),
            rightParen: .rightParenToken(),
            trailingTrivia: .space)
        // The attribute goes first and takes the declaration's indentation.
        let stripped = asLet.with(\.leadingTrivia, [])
        let replacement =
            stripped
            .with(\.bindings, [newBinding.with(\.trailingTrivia, binding.trailingTrivia)])
            .with(
                \.attributes,
                [.attribute(attribute.with(\.leadingTrivia, variable.leadingTrivia))] + stripped.attributes)
        return FixIt(
            message: ImmutableFixIt.replaceVarWithDefaultedLet(type: type),
            changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(replacement))])
    }

    private mutating func mergeStrategy(of variable: VariableDeclSyntax) -> ModelDescription.MergeStrategy {
        guard let attribute = variable.attributes.attribute(named: "Merge"),
            let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
        else { return .standard }
        mergeAttributes.append(attribute)
        if let member = argument.as(MemberAccessExprSyntax.self), member.base == nil {
            switch member.declName.baseName.text {
            case "union": return .union
            case "counter": return .counter
            case "mine": return .mine
            case "theirs": return .theirs
            default: break
            }
        }
        if let call = argument.as(FunctionCallExprSyntax.self),
            call.calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "latest",
            let field = call.arguments.first?.expression.as(StringLiteralExprSyntax.self)?.representedLiteralValue
        {
            latestStrategies.append((field, Syntax(call)))
            return .latest(field: field)
        }
        fail(argument, .unknownMergeStrategy(argument.trimmedDescription))
        return .standard
    }

    /// A property left out of the memberwise initializer must be set by an initializer the user
    /// wrote, which every copy then goes through: it must take the fields as they are, and not fail.
    mutating func checkIgnoredProperties(memberwiseInit: InitializerDeclSyntax?) {
        guard let (name, attribute) = ignoredProperties.first else { return }
        let signature = fields.map { "\($0.name): \($0.type.trimmedDescription)" }.joined(separator: ", ")
        guard let memberwiseInit else {
            for (name, attribute) in ignoredProperties {
                fail(attribute, .ignoredPropertyNotInitialized(name: name, initializer: "init(\(signature))"))
            }
            return
        }
        let types = memberwiseInit.signature.parameterClause.parameters.map { $0.type.withoutAttributes }
        if memberwiseInit.optionalMark != nil || memberwiseInit.signature.effectSpecifiers?.throwsClause != nil
            || types != fields.map(\.type.trimmedDescription)
        {
            fail(attribute, .ignoredPropertyNeedsPlainInitializer(name: name, initializer: "init(\(signature))"))
        }
    }

    /// `Draft` and `Partial` hold the fields in properties that the model must see, which a
    /// `private` type nested in the model cannot be the type of.
    mutating func checkPrivateTypes(_ privateTypes: [(name: String, modifier: DeclModifierSyntax)]) {
        for (name, modifier) in privateTypes {
            guard let field = fields.first(where: { $0.type.namesUnqualified(name) }) else { continue }
            let fixIt = FixIt(
                message: ImmutableFixIt.makeFileprivate(name: name),
                changes: [
                    .replace(
                        oldNode: Syntax(modifier),
                        newNode: Syntax(modifier.with(\.name, modifier.name.with(\.tokenKind, .keyword(.fileprivate)))))
                ])
            fail(modifier, .privateFieldType(typeName: name, field: field.name), fixIts: [fixIt])
        }
    }

    /// `@Merge` needs a `merge` to act on, and `.latest(by:)` must name a field of the model.
    mutating func checkMergeStrategies(modelIsMergeable: Bool) {
        if !modelIsMergeable {
            for attribute in mergeAttributes { fail(attribute, .mergeStrategyWithoutMerge(typeName: typeName)) }
        }
        let names = Set(fields.map(\.name))
        for (field, node) in latestStrategies where !names.contains(field) {
            fail(node, .unknownLatestField(name: field))
        }
    }
}
