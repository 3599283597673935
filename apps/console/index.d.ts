/** The folder holding the built console (index.html, console.js, console.css). */
export declare const consoleDir: string;
