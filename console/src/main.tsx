import { render } from 'preact';
import '../styles/console.css';
import { App } from './app';

render(<App />, document.getElementById('app')!);
