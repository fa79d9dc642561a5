/** What every screen is: it renders into `main` and returns how to stop its timers and subscriptions. */
import type { Route } from '../router.js';

export type Screen = (root: HTMLElement, route: Route) => (() => void) | void;
