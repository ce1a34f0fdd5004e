import Dispatch
import Sluice
import SluiceTesting
import Testing

@Suite struct FilterTests {
    private static let evenAdds: @Sendable (TestAction) -> Bool = {
        if case .add(let value) = $0 { value.isMultiple(of: 2) } else { false }
    }

    @Test func filteredMiddlewareIsSkippedForOtherActions() {
        let seen = Locked<[TestAction]>([])
        let doubler = Middleware<TestState, TestAction> { _ in
            { next in
                { action in
                    seen.append(action)
                    if case .add(let value) = action { next(.add(value * 2)) } else { next(action) }
                }
            }
        }
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middlewares.filter(Self.evenAdds, doubler)]
        )
        store.dispatch(.add(2))  // doubled
        store.dispatch(.add(3))  // skipped: reaches the reducer unchanged
        store.dispatch(.increment)
        #expect(seen.current == [.add(2)])
        #expect(store.state.count == 4 + 3 + 1)
    }

    @Test func filteredSideEffectRunsOnlyForAcceptedActions() {
        let harness = EffectHarness { _, effect in Middlewares.filter(Self.evenAdds, effect) }
        harness.play([0, 1, 2, 3, 4])
        #expect(harness.recorded == runs([(0, 0), (2, 2), (4, 4)]))
        #expect(harness.store.state.count == 10)  // every action reached the reducer
    }

    @Test func filterComposesOnEitherSideOfThrottle() {
        let times = [0, 10, 20, 30, 130, 140, 150, 160, 250, 310, 420]
        let inside = EffectHarness { scheduler, effect in
            Middlewares.throttle(
                .milliseconds(100),
                latest: true,
                on: scheduler,
                Middlewares.filter(Self.evenAdds, effect)
            )
        }
        let outside = EffectHarness { scheduler, effect in
            Middlewares.filter(
                Self.evenAdds,
                Middlewares.throttle(.milliseconds(100), latest: true, on: scheduler, effect)
            )
        }
        // Odd values are rejected: at 10ms .add(10) is even, so use value = time + 1 for "odd" ones.
        for harness in [inside, outside] {
            for (index, time) in times.enumerated() {
                harness.scheduler.advance(to: harness.start + .milliseconds(time))
                harness.store.dispatch(.add(index.isMultiple(of: 3) ? time : time + 1))
            }
            harness.scheduler.advance(by: .seconds(1))
        }
        #expect(inside.recorded == outside.recorded)
        // Accepted: 0, 30, 150, 310. A rejected action is invisible: 251 opens no window, so 310 runs at once.
        #expect(inside.recorded == runs([(0, 0), (30, 100), (150, 200), (310, 310)]))
    }

    @Test func filterComposesOnEitherSideOfDebounce() {
        let inside = EffectHarness { scheduler, effect in
            Middlewares.debounce(.milliseconds(100), on: scheduler, Middlewares.filter(Self.evenAdds, effect))
        }
        let outside = EffectHarness { scheduler, effect in
            Middlewares.filter(Self.evenAdds, Middlewares.debounce(.milliseconds(100), on: scheduler, effect))
        }
        for harness in [inside, outside] {
            // 0 is accepted; 51 and 99 are rejected and must not restart the timer.
            harness.play([0, 51, 99])
        }
        #expect(inside.recorded == runs([(0, 100)]))
        #expect(outside.recorded == inside.recorded)
    }
}
