import Sluice

/// What LargeStates.md's blocks use without declaring it.
extension LargeStatesSnippets {
    static func render<Value>(_ value: Value) {}

    static func show<Value>(_ value: Value) {}
}
