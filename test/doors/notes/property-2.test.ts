import { malformedInputSuite, TOOL_NAMES } from './property.js';

malformedInputSuite(TOOL_NAMES.slice(4, 4 + 4));
