/** Preact with hooks, and htm for its templates: what every page imports, from the files the server vendors. */
import { h, render } from './vendor/preact.js';
import { useCallback, useEffect, useRef, useState } from './vendor/hooks.js';
import htm from './vendor/htm.js';

export const html = htm.bind(h);
export { render, useCallback, useEffect, useRef, useState };
