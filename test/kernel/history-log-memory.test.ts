import { memoryHistoryStorage } from '../helpers/memory-history-log.js';
import { historyLogContract, type Op, type State } from './history-log-contract.js';

historyLogContract('in memory (test helper)', () => memoryHistoryStorage<State, Op>());
