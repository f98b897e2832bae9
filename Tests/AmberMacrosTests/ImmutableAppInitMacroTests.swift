import AmberMacros
import MacroTesting
import SwiftSyntaxMacroExpansion
import Testing

/// Expansions for models with initializers and names of their own: generated members build
/// values through `init(_immutableFields:)`, never through the app's initializers.
@Suite(
    .macros(
        [
            "Immutable": MacroSpec(type: ImmutableMacro.self, conformances: ["ImmutableModel", "Mergeable"]),
            "ImmutableIgnored": MacroSpec(type: FieldMarkerMacro.self),
            "ImmutableDefault": MacroSpec(type: FieldMarkerMacro.self),
        ]
    )
)
struct ImmutableAppInitMacroTests {
    @Test func failableInitializerOfOtherTypesIsNeverCalled() {
        assertMacro {
            """
            @Immutable
            struct FeedItem: Hashable {
                let link: URL
                let title: String

                init?(link: String, title: String) {
                    guard let url = URL(string: link) else { return nil }
                    self.link = url
                    self.title = title
                }
            }
            """
        }
    }

    @Test func appTypeNamedDraftKeepsItsMeaning() {
        assertMacro {
            """
            @Immutable
            struct Message: Codable {
                let id: Int
                let reply: Draft?
                let upload: Partial
            }
            """
        }
    }

    @Test func modelNestedInAPrivateTypeGetsNoExtension() {
        assertMacro {
            """
            struct ContentView {
                private struct Section {
                    @Immutable
                    struct Row: Equatable {
                        let title: String
                    }
                }
            }
            """
        }
    }

    @Test func privateFieldTypeIsDiagnosedWithAFixIt() {
        assertMacro {
            """
            @Immutable
            public struct Gallery {
                private final class Cache {}
                private let cache: Cache
            }
            """
        }
    }

    @Test func functionTypealiasDeclaredElsewhere() {
        assertMacro {
            """
            @Immutable
            struct Chip {
                let label: String
                let onTap: TapHandler
                let onHold: TapHandler?
            }
            """
        }
    }

    @Test func handWrittenConformancesReachDraftThroughTheModel() {
        assertMacro {
            """
            @Immutable
            struct Event: Hashable, Codable {
                let id: Int
                let name: String

                init(from decoder: any Decoder) throws {
                    fatalError()
                }
                func encode(to encoder: any Encoder) throws {}
                static func == (lhs: Event, rhs: Event) -> Bool { lhs.id == rhs.id }
                func hash(into hasher: inout Hasher) { hasher.combine(id) }
            }
            """
        }
    }

    @Test func varWithInitialValueGetsADefaultedLetFixIt() {
        assertMacro {
            """
            @Immutable
            struct Counter {
                var count = 0
                var tags: [String] = []
                var title: String
                var unknown = makeValue()
            }
            """
        }
    }

    @Test func defaultsOfTheGeneratedInitializer() {
        assertMacro {
            """
            @Immutable
            struct Counter {
                let name: String
                @ImmutableDefault(0) let count: Int
            }
            """
        }
    }

    @Test func ignoredPropertyWithAFailableInitializerIsDiagnosed() {
        assertMacro {
            """
            @Immutable
            struct Document {
                let text: String
                @ImmutableIgnored let wordCount: Int

                init?(text: String) {
                    self.text = text
                    self.wordCount = 0
                }
            }
            """
        }
    }
}
