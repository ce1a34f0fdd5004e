import Sluice
import SluiceTesting
import Testing

/// A service that tells whether a test or a live value answered.
struct Mailer: Sendable, Equatable {
    let name: String
}

/// A key without a test value: a test must set it.
private enum MailerKey: StoreDependencyKey {
    static let liveValue = Mailer(name: "live")
}

/// A key with a test value.
private enum ArchiveKey: StoreDependencyKey {
    static let liveValue = Mailer(name: "live archive")
    static let testValue = Mailer(name: "test archive")
}

extension StoreDependencies {
    fileprivate var mailer: Mailer {
        get { self[MailerKey.self] }
        set { self[MailerKey.self] = newValue }
    }
    fileprivate var archive: Mailer {
        self[ArchiveKey.self]
    }
}

/// A synchronous middleware that reads the mailer through the API for each `.saved` and records what it got.
private func mailOnSaved(_ reads: Log<String>) -> Middleware<Cart, CartAction> {
    Middleware { api in
        { next in
            { action in
                if case .saved = action { reads.append(api.dependencies.mailer.name) }
                next(action)
            }
        }
    }
}

private func missingMailer(while processing: String) -> String {
    "MailerKey has no test value and was read \(processing); the live value was used. Set it in the test store's "
        + "dependencies (`dependencies: .test { ... }`) or declare a `testValue` for MailerKey."
}

@Suite struct TestStoreDependenciesTests {
    @Test func aTestStoreReadsTestValuesByDefault() async {
        let reads = Log<String>()
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [mailOnSaved(reads)])
            #expect(store.store.dependencies.context == .test)
            #expect(store.store.dependencies.archive.name == "test archive")
            await store.finish()
        }
        #expect(recorded.isEmpty)
    }

    /// The read happens while `.saved(0)`, queued by `saveNow`, is processed within `send(.save)`: the message names
    /// that action, not the one sent, and is reported at the send. A second read of the key is not reported again.
    @Test func aMissingTestValueReadInASynchronousMiddlewareFailsTheSendNamingTheKeyAndTheAction() async {
        let reads = Log<String>()
        let line = #line + 7
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(saveNow), mailOnSaved(reads)]
            )
            store.send(.save)
            store.receive(.saved(0))
            store.send(.save)
            store.receive(.saved(0))
            await store.finish()
        }
        #expect(recorded.map(\.message) == [missingMailer(while: "while processing saved(0)")])
        #expect(recorded.map(\.line) == [line])
        #expect(recorded.map(\.isWarning) == [false])
        #expect(reads.elements == ["live", "live"])
    }

    /// An async side effect reads the key through `StoreDependencies.current` and through `api.dependencies`; the
    /// failure names the action whose side effect read it and is reported at the next step, the `receive`.
    @Test(arguments: [true, false])
    func aMissingTestValueReadInAnAsyncSideEffectNamesTheAction(throughTheAPI: Bool) async {
        // The read waits until the `send` step returned: else a thread of the pool may run it while `send` is still
        // reporting, and the failure lands at `send`.
        let (sendReturned, sendDidReturn) = AsyncStream.makeStream(of: Void.self)
        let mail = SideEffect<Cart, CartAction> { (action: CartAction, api: MiddlewareAPI<Cart, CartAction>) async in
            guard case .add(let item) = action else { return }
            var afterSend = sendReturned.makeAsyncIterator()
            _ = await afterSend.next()
            let mailer = throughTheAPI ? api.dependencies.mailer : StoreDependencies.current.mailer
            api.dispatch(.note("\(mailer.name): \(item)"))
        }
        let line = #line + 8
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(mail)])
            store.send(.add("tea")) {
                $0.count = 1
                $0.items = ["tea"]
            }
            sendDidReturn.yield()
            await store.receive(.note("live: tea"), timeout: hangGuard) { $0.note = "live: tea" }
            await store.finish(timeout: hangGuard)
        }
        #expect(recorded.map(\.message) == [missingMailer(while: "while processing add(\"tea\")")])
        #expect(recorded.map(\.line) == [line])
    }

    @Test func aReadOutsideTheProcessingOfAnActionSaysSo() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer)
            let name = try? await store.store.run { _ in
                await Task.yield()  // an async effect, in a task of the store's
                return StoreDependencies.current.mailer.name
            }
            #expect(name == "live")
            await store.finish()
        }
        #expect(
            recorded.map(\.message) == [
                missingMailer(
                    while: "outside the processing of an action (by an effect, or by a middleware as it was set up)"
                )
            ]
        )
    }

    @Test func aProvidedOverrideIsUsedInstead() async {
        let reads = Log<String>()
        let mail = SideEffect<Cart, CartAction> { (action: CartAction, api: MiddlewareAPI<Cart, CartAction>) async in
            guard case .add = action else { return }
            reads.append(StoreDependencies.current.mailer.name)
            api.dispatch(.noop)
        }
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(saveNow), mailOnSaved(reads), Middleware(mail)],
                dependencies: .test { $0.mailer = Mailer(name: "fake") }
            )
            store.send(.save)
            store.receive(.saved(0))
            store.send(.add("tea")) {
                $0.count = 1
                $0.items = ["tea"]
            }
            await store.receive(.noop, timeout: hangGuard)
            await store.finish(timeout: hangGuard)
        }
        #expect(recorded.isEmpty)
        #expect(reads.elements == ["fake", "fake"])
    }

    /// A live container is used as it is: the test means to call live services.
    @Test func aLiveContainerReadsLiveValuesWithoutFailing() async {
        let reads = Log<String>()
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(saveNow), mailOnSaved(reads)],
                dependencies: StoreDependencies()
            )
            store.send(.save)
            store.receive(.saved(0))
            await store.finish()
        }
        #expect(recorded.isEmpty)
        #expect(reads.elements == ["live"])
    }

    /// A handler of the test's own still hears of the read, after the test store.
    @Test func theContainersOwnHandlerIsCalledToo() async {
        let heard = Log<String>()
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                dependencies: .test(onMissingTestValue: { heard.append($0.key) })
            )
            store.store.run { api in _ = api.dependencies.mailer }
            await store.finish()
        }
        #expect(recorded.count == 1)
        #expect(heard.elements == ["MailerKey"])
    }

    /// Through Swift Testing itself: the failure is an issue of the test, at the line of the step.
    @Test func aMissingTestValueFailsTheTest() async {
        let reads = Log<String>()
        await withKnownIssue {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(saveNow), mailOnSaved(reads)]
            )
            store.send(.save)
            store.receive(.saved(0))
            await store.finish()
        } matching: { issue in
            issue.sourceLocation?.line == #line - 4
                && issue.comments.map(\.rawValue) == [missingMailer(while: "while processing saved(0)")]
        }
    }
}
